"""Other implementations of assignment 01's functions (see autograde/variants/__init__.py)."""

from autograde.variants import right, wrong

VARIANTS = [
    wrong("get_angles", "exponent 2k/d instead of 2(k//2)/d (a different rate for every column)",
          old="(2 * (k // 2))", new="(2 * k)", message="use integer division in the exponent, 2*(k//2)"),
    wrong("get_angles", "the number of columns of k used instead of the argument d",
          old="np.float64(d)", new="np.float64(k.shape[-1])",
          message="has wrong values",
          visible_message="use the argument d in the exponent, not the number of columns of k"),
    wrong("get_angles", "multiplies by 10000^(2i/d) instead of dividing", old="1 / np.power", new="np.power",
          message="divide pos by 10000**(2*(k//2)/d); you multiplied"),
    wrong("get_angles", "the column numbers 0, 1, 2, ... used instead of the indices k holds", source=(
        "def get_angles(pos, k, d):\n"
        "    columns = np.arange(k.shape[1])[np.newaxis, :]\n"
        "    return pos / np.power(10000, (2 * (columns // 2)) / np.float64(d))\n"),
        message="not the column numbers 0, 1, 2"),
    wrong("get_angles", "the d // 2 pair rates repeated and indexed by k (an odd d's last index has none)", source=(
        "def get_angles(pos, k, d):\n"
        "    rates = np.repeat(1 / np.power(10000.0, 2 * np.arange(d // 2) / d), 2)\n"
        "    return pos * rates[k]\n"), message="get_angles raised IndexError"),
    wrong("get_angles", "a nested list comprehension (no positions give shape (0,))", source=(
        "def get_angles(pos, k, d):\n"
        "    return np.array([[p / 10000 ** (2 * (i // 2) / d) for i in k[0]] for p in pos[:, 0]])\n"),
        message="has shape (0,), expected (0, 4)"),
    right("get_angles", "TensorFlow ops, converted back to NumPy", source=(
        "def get_angles(pos, k, d):\n"
        "    i = tf.cast(k // 2, tf.float64)\n"
        "    return (tf.cast(pos, tf.float64) / tf.pow(tf.constant(10000.0, tf.float64), 2.0 * i / d)).numpy()\n")),
    right("get_angles", "a double loop", source=(
        "def get_angles(pos, k, d):\n"
        "    out = np.zeros((pos.shape[0], k.shape[1]))\n"
        "    for row in range(pos.shape[0]):\n"
        "        for col in range(k.shape[1]):\n"
        "            out[row, col] = pos[row, 0] / 10000 ** (2 * (k[0, col] // 2) / d)\n"
        "    return out\n")),
    wrong("positional_encoding", "sine and cosine swapped",
          old="angles[:, 0::2] = np.sin(angles[:, 0::2])\n    angles[:, 1::2] = np.cos(angles[:, 1::2])",
          new="angles[:, 0::2] = np.cos(angles[:, 0::2])\n    angles[:, 1::2] = np.sin(angles[:, 1::2])",
          message="sine and cosine look swapped"),
    wrong("positional_encoding", "no batch axis", old="angles[np.newaxis, ...]", new="angles",
          message="add the leading batch axis"),
    wrong("positional_encoding", "sines in the first half, cosines in the second", source=(
        "def positional_encoding(positions, d):\n"
        "    angles = get_angles(np.arange(positions)[:, np.newaxis], np.arange(d)[np.newaxis, :], d)\n"
        "    out = np.concatenate([np.sin(angles[:, 0::2]), np.cos(angles[:, 1::2])], axis=-1)\n"
        "    return tf.cast(out[np.newaxis, ...], dtype=tf.float32)\n"), message="sines and cosines must interleave"),
    right("positional_encoding", "np.where over the column parity, float64 result cast at the end", source=(
        "def positional_encoding(positions, d):\n"
        "    angles = get_angles(np.arange(positions)[:, None].astype(np.float64), np.arange(d)[None, :], d)\n"
        "    even = (np.arange(d) % 2 == 0)[None, :]\n"
        "    return tf.constant(np.where(even, np.sin(angles), np.cos(angles))[None], dtype=tf.float32)\n")),
    wrong("positional_encoding", "stacked sine/cosine pairs in TensorFlow: an odd d has one cosine fewer than sines",
          source=(
              "def positional_encoding(positions, d):\n"
              "    angles = get_angles(np.arange(positions)[:, np.newaxis], np.arange(d)[np.newaxis, :], d)\n"
              "    sines = tf.sin(tf.constant(angles[:, 0::2], tf.float32))\n"
              "    cosines = tf.cos(tf.constant(angles[:, 1::2], tf.float32))\n"
              "    pairs = tf.reshape(tf.stack([sines, cosines[:, : sines.shape[1]]], axis=-1), (positions, -1))\n"
              "    return pairs[tf.newaxis, :, :d]\n"),
          message="positional_encoding raised InvalidArgumentError: Shapes of all inputs must match"),
    wrong("positional_encoding", "sine/cosine pairs stacked in NumPy and reshaped to d columns (fails for an odd d)",
          source=(
              "def positional_encoding(positions, d):\n"
              "    angles = get_angles(np.arange(positions)[:, np.newaxis], np.arange(d)[np.newaxis, :], d)\n"
              "    pairs = np.stack([np.sin(angles[:, 0::2]), np.cos(angles[:, 1::2])], axis=-1)\n"
              "    return tf.constant(pairs.reshape(1, positions, d), tf.float32)\n"),
          message="positional_encoding raised ValueError: all input arrays must have the same shape"),
    wrong("positional_encoding", "one row per position in a Python list (no positions give shape (1, 0))", source=(
        "def positional_encoding(positions, d):\n"
        "    rows = []\n"
        "    for p in range(positions):\n"
        "        row = get_angles(np.array([[p]]), np.arange(d)[np.newaxis, :], d)[0]\n"
        "        rows.append(np.where(np.arange(d) % 2 == 0, np.sin(row), np.cos(row)))\n"
        "    return tf.cast(np.array(rows)[np.newaxis], tf.float32)\n"), message="has shape (1, 0), expected (1, 0, "),
    right("positional_encoding", "stacked sine/cosine pairs in TensorFlow, the cosines padded for an odd d", source=(
        "def positional_encoding(positions, d):\n"
        "    angles = get_angles(np.arange(positions)[:, np.newaxis], np.arange(d)[np.newaxis, :], d)\n"
        "    sines = tf.sin(tf.constant(angles[:, 0::2], tf.float32))\n"
        "    cosines = tf.cos(tf.constant(angles[:, 1::2], tf.float32))\n"
        "    cosines = tf.pad(cosines, [[0, 0], [0, sines.shape[1] - cosines.shape[1]]])\n"
        "    pairs = tf.reshape(tf.stack([sines, cosines], axis=-1), (positions, 2 * sines.shape[1]))\n"
        "    return pairs[tf.newaxis, :, :d]\n")),
]
