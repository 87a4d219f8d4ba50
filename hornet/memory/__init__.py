"""The Hornet memory manager: block arrays of power-of-two blocks, bit trees, size-class pools."""
