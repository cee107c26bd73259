module ferromq.local/bench/perf

go 1.21

require github.com/pebbe/zmq4 v1.4.0
