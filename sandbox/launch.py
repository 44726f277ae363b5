"""Starting a sandbox server that cannot be mistaken for another (issue 42).

The port is bound before anything slow happens and the bound socket is handed to the server, so no other sandbox can take
the port between a check and a bind; the server answers its health check with an instance id made here, which whoever
records its endpoint records too and checks (``SandboxClient(endpoint, instance)``).
"""

from __future__ import annotations

import errno
import secrets
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def new_instance_id() -> str:
    return secrets.token_hex(8)


def listening_socket(port: int) -> socket.socket:
    """A socket listening on 127.0.0.1:``port``, or on a free port the system picks when ``port`` is 0 or taken."""
    sock = socket.socket()
    # As the server's own bind would: a port whose last connections linger in TIME_WAIT is free (on Linux this never
    # lets two sockets listen on one port).
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as error:
        if error.errno != errno.EADDRINUSE:
            sock.close()
            raise
        sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


def endpoint_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{host}:{port}"


def spawn_server(sock: socket.socket, instance: str, log, env: dict) -> subprocess.Popen:
    """``python -m sandbox serve`` on the listening ``sock``, answering its health check with ``instance``; its output to ``log``.

    The caller closes its own ``sock`` afterwards: the server holds a copy, and a dead server's port then refuses
    connections instead of queueing them."""
    return subprocess.Popen(
        [sys.executable, "-m", "sandbox", "serve", "--fd", str(sock.fileno()), "--instance", instance],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        env=env,
        pass_fds=(sock.fileno(),),
    )
