"""The one exception type that reaches a user as a single line, never a traceback."""


class UserError(Exception):
    """Bad input from the user: a file, a line, a config key or a checkpoint.

    The message names what is wrong and where; the CLI prints it on one line and
    exits with a non-zero status.
    """


class ArgumentTypeError(UserError, TypeError):
    """An argument of a public function has the wrong type: a UserError to the CLI and the
    server, and a TypeError to Python code that catches those."""


class ArgumentValueError(UserError, ValueError):
    """An argument of a public function has the right type but a value out of range: a
    UserError to the CLI and the server, and a ValueError to Python code that catches those."""
