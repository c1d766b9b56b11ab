"""Framework components: ragkit inside LangChain, LlamaIndex and Haystack 2 code.

Each framework is an optional extra, imported only by its own module:

- :mod:`ragkit.integrations.langchain` (``pip install "ragkit-pipeline[langchain]"``):
  :class:`~ragkit.integrations.langchain.RagkitVectorStore` (a ``VectorStore`` over an
  :class:`~ragkit.Index`) and :class:`~ragkit.integrations.langchain.RagkitTextSplitter`
  (ragkit's adaptive chunker as a ``TextSplitter``);
- :mod:`ragkit.integrations.llama_index` (``pip install "ragkit-pipeline[llama-index]"``):
  :class:`~ragkit.integrations.llama_index.RagkitVectorStore` (a vector store that stores
  text, for ``VectorStoreIndex``), :class:`~ragkit.integrations.llama_index.RagkitEmbedding`
  (the index's encoder as an embedding model),
  :class:`~ragkit.integrations.llama_index.RagkitRetriever` (a ``BaseRetriever``) and
  :class:`~ragkit.integrations.llama_index.RagkitNodeParser` (a ``NodeParser``);
- :mod:`ragkit.integrations.haystack` (``pip install "ragkit-pipeline[haystack]"``):
  :class:`~ragkit.integrations.haystack.RagkitDocumentStore` (a ``DocumentStore``),
  :class:`~ragkit.integrations.haystack.RagkitRetriever` and
  :class:`~ragkit.integrations.haystack.RagkitDocumentSplitter` (``@component`` classes).

Every chunk a component hands on points into the original text with character offsets, in
the framework's own metadata keys (``start_index``, ``start_char_idx``, ``split_idx_start``).
Importing a module whose framework is not installed raises a :class:`~ragkit.RagkitError`
that names the extra to install.

Example:
    >>> from ragkit.integrations.common import install_hint
    >>> install_hint("langchain")
    'pip install "ragkit-pipeline[langchain]"'
"""
