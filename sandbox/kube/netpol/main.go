// Command kube-network-policies runs sig-network's NetworkPolicy enforcer
// (sigs.k8s.io/kube-network-policies, pinned in go.mod) for the sandbox's node.
//
// It is the project's cmd/main.go with one change: the API server is reached
// through a kubeconfig (--kubeconfig) instead of the in-cluster service account
// files, because the sandbox runs it as a process next to kube-apiserver, not as
// a DaemonSet pod. The enforcement (nftables rules, nfqueue verdicts, the
// NetworkPolicy evaluation) is the package's own, unchanged.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"golang.org/x/sys/unix"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/kube-network-policies/pkg/networkpolicy"
)

func main() {
	os.Exit(run())
}

func run() int {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the API server to watch")
	nodeName := flag.String("hostname-override", "", "name of the Node whose pods are enforced")
	queueID := flag.Int("nfqueue-id", 100, "number of the nfqueue used")
	failOpen := flag.Bool("fail-open", false, "if set, don't drop packets if the controller is not running")
	bug1766 := flag.Bool("netfilter-bug-1766-fix", true, "process DNS packets on the PREROUTING hook (not needed for kernels 6.12+)")
	c := logsapi.NewLoggingConfiguration()
	logsapi.AddGoFlags(c, flag.CommandLine)
	flag.Parse()
	logs.InitLogs()
	if err := logsapi.ValidateAndApply(c, nil); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		return 1
	}
	if *kubeconfig == "" || *nodeName == "" {
		fmt.Fprintln(os.Stderr, "--kubeconfig and --hostname-override are required")
		return 2
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, unix.SIGTERM)
	defer cancel()

	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		klog.Errorf("reading the kubeconfig: %v", err)
		return 1
	}
	clientset, err := kubernetes.NewForConfig(config)
	if err != nil {
		klog.Errorf("creating the client: %v", err)
		return 1
	}
	factory := informers.NewSharedInformerFactory(clientset, 0)
	controller, err := networkpolicy.NewController(
		clientset,
		factory.Networking().V1().NetworkPolicies(),
		factory.Core().V1().Namespaces(),
		factory.Core().V1().Pods(),
		nil, nil, nil, nil,
		networkpolicy.Config{
			FailOpen:            *failOpen,
			QueueID:             *queueID,
			NodeName:            *nodeName,
			NetfilterBug1766Fix: *bug1766,
			// As the project's main.go leaves it: without a runtime's NRI socket the plugin stays idle
			// and pod IPs come from the API server.
		},
	)
	if err != nil {
		klog.Errorf("starting the network policy controller: %v", err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- controller.Run(ctx) }()
	factory.Start(ctx.Done())
	select {
	case <-ctx.Done():
		<-done
	case err := <-done:
		if err != nil {
			klog.Errorf("network policy controller: %v", err)
			return 1
		}
	}
	return 0
}
