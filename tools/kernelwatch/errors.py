"""The one error type the CLI turns into `kernelwatch: error: ...` and exit status 2."""


class InputError(Exception):
    """Bad input or usage that the user can fix; its message is one line, shown as is."""

    def __init__(self, message: str) -> None:
        # One line on stderr is the contract: fold anything multi-line.
        super().__init__(" ".join(str(message).split()))
