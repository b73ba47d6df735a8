// pause holds a pod's namespaces for the real node's sandboxes (containerd's sandbox image):
// as PID 1 it reaps orphaned children and exits on SIGTERM or SIGINT. Built by
// tools/build-binaries.sh pause; packed into an image by tools/node/images.sh.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
