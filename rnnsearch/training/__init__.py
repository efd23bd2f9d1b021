"""Training: loss, model directory (checkpoints) and the training loop."""
