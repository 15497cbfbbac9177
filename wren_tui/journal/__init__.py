"""The persistence kernel: the only code that writes journal files."""
