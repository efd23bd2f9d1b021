"""Scoring and plotting of translations; no model code here."""
