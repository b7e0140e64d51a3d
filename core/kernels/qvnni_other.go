//go:build !amd64 || purego

package kernels

// useVNNI is false without the assembly: the 8-bit convolution kernels run
// their portable layouts.
const useVNNI = false

// qgemmTile is qgemmTileGo where there is no assembly.
func qgemmTile(t *qgemmTileArgs) { qgemmTileGo(t) }

// dwRow is dwRowGo where there is no assembly.
func dwRow(t *dwRowArgs) { dwRowGo(t) }
