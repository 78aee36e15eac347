"""Split by area: import from the module that owns the function."""
