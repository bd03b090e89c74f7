"""The retrieval area of constructions/, one module per concept."""

# imported first, as the bare module was before the move (registration order),
# and re-exported for code that imported it as one module
from constructions.retrieval.task import (  # noqa: F401
    RetrievalData,
    RetrievalTask,
    cooccurrence_counts,
    make_retrieval_data,
    make_retrieval_task,
    oracle_accuracy,
    sample_cooccurrence_counts,
    sample_sequences,
    value_memory,
)
