"""`rnnsearch serve`: a JSON translation API and a web page that shows the alignment.

create_app(translator, model_dir, limits) builds the FastAPI app; serve() runs it for a
loaded model with uvicorn.
"""

from rnnsearch.server.app import create_app
from rnnsearch.server.limits import Limits
from rnnsearch.server.run import serve

__all__ = ["Limits", "create_app", "serve"]
