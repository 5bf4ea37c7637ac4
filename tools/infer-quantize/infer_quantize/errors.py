"""The error type the command turns into one line on stderr and exit status 1."""


class QuantizeError(Exception):
    """A user error (bad file, bad option, unsupported model): its message is one line that
    names the file, node, tensor or option at fault."""
