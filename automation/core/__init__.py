"""What every layer uses: errors, waiting with deadlines, Ctrl-C, progress, results, masking."""
