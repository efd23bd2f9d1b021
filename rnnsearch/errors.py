"""The one exception type that reaches a user as a single line, never a traceback."""


class UserError(Exception):
    """Bad input from the user: a file, a line, a config key or a checkpoint.

    The message names what is wrong and where; the CLI prints it on one line and
    exits with a non-zero status.
    """
