"""recall-bounds verify: claims (predicted vs measured), training loops, sweeps and the CLI."""
