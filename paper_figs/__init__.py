"""One function per figure, drawn from verify's stored results (PNG and PDF, no LaTeX needed)."""
