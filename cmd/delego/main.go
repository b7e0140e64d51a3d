// Command delego runs TensorFlow Lite models.
package main

func main() {}
