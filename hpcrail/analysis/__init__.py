"""Post-processing: figures and checks of result datasets."""
