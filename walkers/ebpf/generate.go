package ebpf

// The generated bindings and object are committed so that building needs no clang.
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go@v0.22.0 -cc clang -target amd64 -type sample sampler sampler.c -- -O2 -g -Wall -I/usr/include/x86_64-linux-gnu
