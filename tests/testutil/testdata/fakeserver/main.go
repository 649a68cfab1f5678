// Command fakeserver stands in for streamdb in testutil's own tests: it
// takes streamdb's flags, forwards every TCP connection on --listen to the
// PostgreSQL server at $FAKE_UPSTREAM, and exits 0 on SIGTERM. With
// $FAKE_HANG set it logs that it starts and then hangs before listening,
// as a server stuck in its start does.
package main

import (
	"flag"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:5433", "")
	flag.String("data-dir", "", "")
	flag.String("nats-listen", "", "")
	flag.String("nats-url", "", "")
	flag.String("config", "", "")
	flag.String("http-listen", "", "")
	flag.Parse()
	if os.Getenv("FAKE_HANG") != "" {
		slog.Info("fakeserver starting")
		hangWhileStarting()
	}

	l, err := net.Listen("tcp", *listen)
	if err != nil {
		slog.Error("listen", "err", err)
		os.Exit(1)
	}
	slog.Info("fakeserver listening", "addr", *listen)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	go func() {
		<-sigs
		slog.Info("fakeserver stopping")
		os.Exit(0)
	}()
	for {
		c, err := l.Accept()
		if err != nil {
			slog.Error("accept", "err", err)
			os.Exit(1)
		}
		go forward(c)
	}
}

func forward(c net.Conn) {
	defer c.Close()
	up, err := net.Dial("tcp", os.Getenv("FAKE_UPSTREAM"))
	if err != nil {
		slog.Error("dial upstream", "err", err)
		return
	}
	defer up.Close()
	go io.Copy(up, c)
	io.Copy(c, up)
}

// hangWhileStarting blocks for good; its name shows in a goroutine dump.
func hangWhileStarting() {
	select {}
}
