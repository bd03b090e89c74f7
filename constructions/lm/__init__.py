"""The lm area of constructions/, one module per concept."""
