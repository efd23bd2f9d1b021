"""Speech side: WAV reading, spoken digit strings (FSDD), log-mel features and digit scores."""
