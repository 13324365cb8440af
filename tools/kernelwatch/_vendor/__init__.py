"""Third-party code kept inside kernelwatch, unchanged but for its import paths (README.md)."""
