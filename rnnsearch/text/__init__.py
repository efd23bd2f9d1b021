"""Text side: corpus reading, subwords and batching; no model code here."""
