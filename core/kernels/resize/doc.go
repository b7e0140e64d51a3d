// Package resize holds RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR, with
// an 8-bit row kernel in internal/asm/resizerow.
package resize
