"""Word documents (.docx): the format (format.py), the package opened and checked
(package.py), a paragraph read into one line of markup (paragraph.py) and written back
from its translation (writing.py)."""
