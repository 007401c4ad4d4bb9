"""The suites' shapes, named field by field where they are declared. Each helper returns
the plain tuple the op takes (``src/tensorops``, each op module's docstring): asv keys
the history on the params' text form, which a named tuple would change."""

from __future__ import annotations


def activations(*, batch: int, tokens: int, features: int) -> tuple[int, ...]:
    return (batch, tokens, features)


def activation_sweep(*larger: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The shapes of a sweep over activations: one token, one sequence, a large batch of
    small features, then the sweep's own ``larger`` (odd sizes, many features)."""
    return [
        activations(batch=1, tokens=1, features=768),
        activations(batch=1, tokens=512, features=768),
        activations(batch=128, tokens=512, features=64),
        *larger,
    ]


def projection(*, batch: int, tokens: int, in_features: int, out_features: int) -> tuple:
    return (batch, tokens, in_features, out_features)


def product(*, m: int, k: int, n: int) -> tuple[int, ...]:
    """(m, k) @ (k, n)."""
    return (m, k, n)


def batched_product(*, batch: int, m: int, k: int, n: int) -> tuple[int, ...]:
    return (batch, m, k, n)


def attention(*, batch: int, heads: int, tokens: int, head_dim: int) -> tuple[int, ...]:
    return (batch, heads, tokens, head_dim)


def conv(
    *, batch: int, in_channels: int, height: int, width: int, out_channels: int, kernel: int
) -> tuple[int, ...]:
    """A square ``kernel``, stride 1, no padding."""
    return (batch, in_channels, height, width, out_channels, kernel)


# A transformer's activations: batch 32, 512 tokens, width 768 (BERT-base, GPT-2 small).
NLP = activations(batch=32, tokens=512, features=768)
NLP_PROJECTION = projection(batch=32, tokens=512, in_features=768, out_features=768)
# A 768-wide model's attention: 12 heads of 64.
ATTENTION = attention(batch=8, heads=12, tokens=512, head_dim=64)
# The first convolution of an ImageNet CNN: RGB 224x224 to 64 channels, 3x3.
CONV_B1 = conv(batch=1, in_channels=3, height=224, width=224, out_channels=64, kernel=3)
CONV_B32 = conv(batch=32, in_channels=3, height=224, width=224, out_channels=64, kernel=3)


def embedding(*, batch: int, tokens: int, vocabulary: int, features: int) -> tuple[int, ...]:
    return (batch, tokens, vocabulary, features)


# GPT-2 small's token embedding: a 50257 x 768 table looked up at 32 x 512 tokens.
GPT2_EMBEDDING = embedding(batch=32, tokens=512, vocabulary=50257, features=768)


def image(*, batch: int, channels: int, height: int, width: int) -> tuple[int, ...]:
    return (batch, channels, height, width)


def rows_of(*, rows: int, features: int) -> tuple[int, ...]:
    return (rows, features)


# DLRM's pooled lookups: 2048 bags of 32 indices into a 100000 x 64 table.
DLRM_BAGS = embedding(batch=2048, tokens=32, vocabulary=100_000, features=64)
# ResNet-50's first stage after the stem: 64 channels at 112x112 (pooling), 256 at 56x56
# (normalisation), 2048 at 7x7 (the global pool); an FPN level at 64x64 (upsampling).
RESNET_STEM = image(batch=8, channels=64, height=112, width=112)
RESNET_STAGE1 = image(batch=8, channels=256, height=56, width=56)
RESNET_HEAD = image(batch=32, channels=2048, height=7, width=7)
FPN_LEVEL = image(batch=8, channels=256, height=64, width=64)
# GPT-2 small's 12 heads of 64 for 8 x 512 tokens, joined into its 768 features.
GPT2_HEADS = (12, 8, 512, 64)  # (parts, batch, tokens, features per part)
# Next-token logits of 64 sequences over GPT-2's vocabulary (top-k sampling, sorting).
GPT2_LOGITS = rows_of(rows=64, features=50257)
# BERT's masked-LM head: 1024 tokens over its 30522-word vocabulary.
BERT_MLM_LOGITS = rows_of(rows=1024, features=30522)
