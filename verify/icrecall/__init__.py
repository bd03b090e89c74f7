"""The icrecall area of verify/, one module per concept."""

# imported first, as the bare module was before the move (registration order)
import verify.icrecall.memories  # noqa: F401
