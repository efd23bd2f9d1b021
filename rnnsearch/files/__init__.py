"""The files a model directory holds: written whole or not at all (atomic.py), laid out
and loaded (model_directory.py), and the run's metrics log (metrics_log.py)."""
