// Package partition will split a model's graph among delegates: given the
// graph and the delegates' declared support in priority order, it assigns
// every node and forms acyclic partitions, recording why each node stayed on
// the CPU. It is pure: no I/O, no RPC. (Empty until the delegates issue.)
package partition
