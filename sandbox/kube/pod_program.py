"""What runs in a pod's network namespace on the sandbox's node (``sandbox/kube/node.py``), as a container would.

``serve TCP UDP``: answers each TCP connection with ``hello`` and echoes UDP, after printing ``listening``.
``probe tcp|udp ADDRESS PORT TIMEOUT``: prints ``open`` when the server answered, ``closed`` otherwise (no answer
within the timeout, a reset, an ICMP unreachable). Standard library only, run as a script, so it starts fast.
"""

from __future__ import annotations

import argparse
import socket
import threading


def _serve(tcp: int, udp: int) -> None:
    tcp_server = socket.create_server(("0.0.0.0", tcp))
    udp_server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp_server.bind(("0.0.0.0", udp))

    def answer_udp() -> None:
        while True:
            data, peer = udp_server.recvfrom(512)
            udp_server.sendto(data, peer)

    threading.Thread(target=answer_udp, daemon=True).start()
    print("listening", flush=True)
    while True:
        client, _ = tcp_server.accept()
        with client:
            client.sendall(b"hello\n")


def _probe(protocol: str, address: str, port: int, timeout: float) -> str:
    kind = socket.SOCK_STREAM if protocol == "tcp" else socket.SOCK_DGRAM
    with socket.socket(socket.AF_INET, kind) as sock:
        sock.settimeout(timeout)
        try:
            if protocol == "tcp":
                sock.connect((address, port))
                return "open" if sock.recv(16) == b"hello\n" else "closed"
            sock.sendto(b"ping", (address, port))
            return "open" if sock.recvfrom(16)[0] == b"ping" else "closed"
        except OSError:  # a timeout, a reset, an ICMP unreachable
            return "closed"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="pod_program.py")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="answer TCP with 'hello' and echo UDP")
    serve.add_argument("tcp", type=int)
    serve.add_argument("udp", type=int)
    probe = commands.add_parser("probe", help="print open or closed")
    probe.add_argument("protocol", choices=["tcp", "udp"])
    probe.add_argument("address")
    probe.add_argument("port", type=int)
    probe.add_argument("timeout", type=float)
    args = parser.parse_args(argv)
    if args.command == "serve":
        _serve(args.tcp, args.udp)
    else:
        print(_probe(args.protocol, args.address, args.port, args.timeout))


if __name__ == "__main__":
    main()
