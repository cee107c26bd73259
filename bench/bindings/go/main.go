// Workload C driver, Go over github.com/pebbe/zmq4 (cgo, -lzmq): libzmq's
// classic perf pair.
//
//	perf ROLE ENDPOINT SIZE COUNT      (see bench/bindings/c/perf.c)
//
// Linked against libzmq.so.5 by soname; LD_LIBRARY_PATH selects the library.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	zmq "github.com/pebbe/zmq4"
)

func fail(what string, err error) {
	fmt.Fprintf(os.Stderr, "perf(go): %s: %v\n", what, err)
	os.Exit(1)
}

func must(what string, err error) {
	if err != nil {
		fail(what, err)
	}
}

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintf(os.Stderr, "usage: %s ROLE ENDPOINT SIZE COUNT\n", os.Args[0])
		os.Exit(2)
	}
	role, ep := os.Args[1], os.Args[2]
	size, err1 := strconv.Atoi(os.Args[3])
	count, err2 := strconv.Atoi(os.Args[4])
	if err1 != nil || err2 != nil || size < 1 || count < 2 {
		fmt.Fprintln(os.Stderr, "perf(go): SIZE >= 1 and COUNT >= 2 required")
		os.Exit(2)
	}
	types := map[string]zmq.Type{"local_thr": zmq.PULL, "remote_thr": zmq.PUSH,
		"local_lat": zmq.REP, "remote_lat": zmq.REQ}
	typ, ok := types[role]
	if !ok {
		fmt.Fprintf(os.Stderr, "perf(go): unknown role %q\n", role)
		os.Exit(2)
	}
	maj, min, pat := zmq.Version()
	fmt.Fprintf(os.Stderr, "perf(go): zmq_version %d.%d.%d\n", maj, min, pat)
	ctx, err := zmq.NewContext()
	must("NewContext", err)
	s, err := ctx.NewSocket(typ)
	must("NewSocket", err)
	var result map[string]float64
	switch role {
	case "local_thr":
		must("Bind", s.Bind(ep))
		var t0 time.Time
		for i := 0; i < count; i++ {
			b, err := s.RecvBytes(0)
			must("RecvBytes", err)
			if len(b) != size {
				fail("RecvBytes", fmt.Errorf("message of %d bytes", len(b)))
			}
			if i == 0 {
				t0 = time.Now()
			}
		}
		el := time.Since(t0).Seconds()
		result = map[string]float64{"msg_per_s": float64(count-1) / el}
	case "remote_thr":
		must("Connect", s.Connect(ep))
		data := bytes.Repeat([]byte{'D'}, size)
		for i := 0; i < count; i++ {
			_, err := s.SendBytes(data, 0)
			must("SendBytes", err)
		}
	case "local_lat":
		must("Bind", s.Bind(ep))
		for i := 0; i < count; i++ {
			b, err := s.RecvBytes(0)
			must("RecvBytes", err)
			_, err = s.SendBytes(b, 0)
			must("SendBytes", err)
		}
	case "remote_lat":
		must("Connect", s.Connect(ep))
		data := bytes.Repeat([]byte{'D'}, size)
		t0 := time.Now()
		for i := 0; i < count; i++ {
			_, err := s.SendBytes(data, 0)
			must("SendBytes", err)
			b, err := s.RecvBytes(0)
			must("RecvBytes", err)
			if len(b) != size {
				fail("RecvBytes", fmt.Errorf("reply of %d bytes", len(b)))
			}
		}
		el := time.Since(t0).Seconds()
		result = map[string]float64{"latency_us": el * 1e6 / (2 * float64(count))}
	}
	must("Close", s.Close())
	must("Term", ctx.Term())
	if result != nil {
		j, _ := json.Marshal(result)
		fmt.Printf("RESULT %s\n", j)
	}
}
