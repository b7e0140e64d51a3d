// Package pool holds AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D.
package pool
