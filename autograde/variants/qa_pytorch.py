"""Other implementations of assignment 08's exercises (see autograde/variants/__init__.py): the module, the loss, the
training step and the evaluation loop, as learners write them on Keras's PyTorch backend."""

from autograde.variants import right, wrong

FORWARD_CALL = 'self.backbone(inputs, training=self.training)["sequence_output"]'
BOTH = ("start_loss = F.cross_entropy(start_logits, start_positions)\n"
        "    end_loss = F.cross_entropy(end_logits, end_positions)")

MODEL = [
    wrong("QAModel", "start and end swapped", old="return logits[..., 0], logits[..., 1]",
          new="return logits[..., 1], logits[..., 0]", message="start and end are swapped"),
    wrong("QAModel", "the head on pooled_output", old=FORWARD_CALL,
          new='self.backbone(inputs, training=self.training)["pooled_output"]', message="the head reads pooled_output"),
    wrong("QAModel", "a softmax over the positions", old="logits = self.qa_outputs(sequence_output)",
          new="logits = torch.softmax(self.qa_outputs(sequence_output), dim=1)", message="a softmax was applied"),
    wrong("QAModel", "the backbone called without training=", old=FORWARD_CALL,
          new='self.backbone(inputs)["sequence_output"]', message="the backbone's dropout never acts"),
    wrong("QAModel", "training=True at every call", old=FORWARD_CALL,
          new='self.backbone(inputs, training=True)["sequence_output"]', message="dropout is on at inference"),
    wrong("QAModel", "the padding mask replaced by ones",
          old='"padding_mask": padding_mask}', new='"padding_mask": torch.ones_like(token_ids)}',
          message="the padding_mask does not reach it"),
    wrong("QAModel", "hidden size hard-coded to 384", old="torch.nn.Linear(backbone.hidden_dim, 2)",
          new="torch.nn.Linear(384, 2)", message="read the size from the backbone"),
    wrong("QAModel", "the backbone frozen", old="        self.backbone = backbone\n",
          new="        self.backbone = backbone\n        self.backbone.requires_grad_(False)\n",
          message="do not freeze it"),
    wrong("QAModel", "the logits detached", old="return logits[..., 0], logits[..., 1]",
          new="return logits[..., 0].detach(), logits[..., 1].detach()", message="carry no gradient"),
    wrong("QAModel", "a head without bias", old="torch.nn.Linear(backbone.hidden_dim, 2)",
          new="torch.nn.Linear(backbone.hidden_dim, 2, bias=False)", message="has no bias"),
    wrong("QAModel", "the head on a detached copy of the sequence output", old=FORWARD_CALL,
          new=FORWARD_CALL + ".detach()", message="sends no gradient to"),
    wrong("QAModel", "the backbone run under torch.no_grad(), the head outside it", old=(
        '        sequence_output = self.backbone(inputs, training=self.training)["sequence_output"]'), new=(
        '        with torch.no_grad():\n'
        '            sequence_output = self.backbone(inputs, training=self.training)["sequence_output"]'),
          message="sends no gradient to"),
    wrong("QAModel", "squeeze() with no axis", old="return logits[..., 0], logits[..., 1]",
          new="start, end = logits.split(1, dim=-1)\n        return start.squeeze(), end.squeeze()",
          message="squeeze() without an axis"),
    wrong("QAModel", "torch.squeeze of the whole output, then unbind", old="return logits[..., 0], logits[..., 1]",
          new="return torch.squeeze(logits).unbind(-1)", message="squeeze() without an axis"),
    right("QAModel", "a local training flag, the backbone's outputs unpacked by key", source=(
        "class QAModel(torch.nn.Module):\n"
        "    def __init__(self, backbone):\n"
        "        super().__init__()\n"
        "        self.backbone = backbone\n"
        "        hidden = backbone.hidden_dim\n"
        "        self.qa_outputs = torch.nn.Linear(hidden, 2)\n"
        "\n"
        "    def forward(self, token_ids, segment_ids, padding_mask):\n"
        "        dropout_on = bool(self.training)\n"
        "        outputs = self.backbone(\n"
        "            {'padding_mask': padding_mask, 'segment_ids': segment_ids, 'token_ids': token_ids},\n"
        "            training=dropout_on)\n"
        "        logits = self.qa_outputs(outputs['sequence_output'])\n"
        "        return logits.select(-1, 0), logits.select(-1, 1)\n")),
    right("QAModel", "unbind, and the size from the backbone's config", source=(
        "class QAModel(torch.nn.Module):\n"
        "    def __init__(self, backbone):\n"
        "        super().__init__()\n"
        "        self.backbone = backbone\n"
        "        self.qa_outputs = torch.nn.Linear(backbone.get_config()['hidden_dim'], 2)\n"
        "\n"
        "    def forward(self, token_ids, segment_ids, padding_mask):\n"
        "        inputs = dict(token_ids=token_ids, segment_ids=segment_ids, padding_mask=padding_mask)\n"
        "        hidden = self.backbone(inputs, training=self.training)['sequence_output']\n"
        "        start, end = self.qa_outputs(hidden).unbind(dim=-1)\n"
        "        return start, end\n")),
    right("QAModel", "split and squeeze, returning a list", source=(
        "class QAModel(torch.nn.Module):\n"
        "    def __init__(self, backbone):\n"
        "        super().__init__()\n"
        "        self.backbone = backbone\n"
        "        self.qa_outputs = torch.nn.Linear(in_features=backbone.hidden_dim, out_features=2, bias=True)\n"
        "\n"
        "    def forward(self, token_ids, segment_ids, padding_mask):\n"
        "        outputs = self.backbone({'token_ids': token_ids, 'segment_ids': segment_ids,\n"
        "                                 'padding_mask': padding_mask}, training=self.training)\n"
        "        start, end = self.qa_outputs(outputs['sequence_output']).split(1, dim=-1)\n"
        "        return [start.squeeze(-1), end.squeeze(-1)]\n")),
]

LOSS = [
    wrong("qa_loss", "start and end positions swapped", old=BOTH,
          new="start_loss = F.cross_entropy(start_logits, end_positions)\n"
              "    end_loss = F.cross_entropy(end_logits, start_positions)",
          message="pair start_logits with start_positions"),
    wrong("qa_loss", "the sum of the two losses", old="return (start_loss + end_loss) / 2",
          new="return start_loss + end_loss", message="the sum of the start and the end loss"),
    wrong("qa_loss", "softmax before cross_entropy", old=BOTH,
          new="start_loss = F.cross_entropy(torch.softmax(start_logits, dim=-1), start_positions)\n"
              "    end_loss = F.cross_entropy(torch.softmax(end_logits, dim=-1), end_positions)",
          message="a softmax is applied twice"),
    wrong("qa_loss", "summed over the batch", old=BOTH,
          new="start_loss = F.cross_entropy(start_logits, start_positions, reduction='sum')\n"
              "    end_loss = F.cross_entropy(end_logits, end_positions, reduction='sum')",
          message="summed over the windows of the batch"),
    wrong("qa_loss", "the start loss alone", old="return (start_loss + end_loss) / 2", new="return start_loss",
          message="the start loss alone"),
    wrong("qa_loss", "nll_loss on logits", source=(
        "def qa_loss(start_logits, end_logits, start_positions, end_positions):\n"
        "    return (F.nll_loss(start_logits, start_positions) + F.nll_loss(end_logits, end_positions)) / 2\n"),
          message="nll_loss was given logits"),
    wrong("qa_loss", "a Python number returned", old="return (start_loss + end_loss) / 2",
          new="return ((start_loss + end_loss) / 2).item()", message="not a tensor"),
    wrong("qa_loss", "the start logits detached", old="F.cross_entropy(start_logits, start_positions)",
          new="F.cross_entropy(start_logits.detach(), start_positions)", message="no gradient reaches the logits"),
    right("qa_loss", "log_softmax and gather", source=(
        "def qa_loss(start_logits, end_logits, start_positions, end_positions):\n"
        "    def one(logits, positions):\n"
        "        picked = torch.log_softmax(logits, dim=-1).gather(1, positions.long().unsqueeze(1))\n"
        "        return -picked.mean()\n"
        "    return 0.5 * (one(start_logits, start_positions) + one(end_logits, end_positions))\n")),
    right("qa_loss", "one CrossEntropyLoss over both ends concatenated", source=(
        "def qa_loss(start_logits, end_logits, start_positions, end_positions):\n"
        "    loss = torch.nn.CrossEntropyLoss()\n"
        "    return loss(torch.cat([start_logits, end_logits]), torch.cat([start_positions, end_positions]))\n")),
]

STEP = [
    wrong("train_step", "no optimizer.zero_grad()", old="    optimizer.zero_grad()\n", new="",
          message="the gradients add up from one step to the next"),
    wrong("train_step", "zero_grad between backward and step", old="    loss.backward()\n",
          new="    loss.backward()\n    optimizer.zero_grad()\n", message="no weight changed"),
    wrong("train_step", "the schedule never stepped", old="    scheduler.step()\n", new="",
          message="the learning rate never changed"),
    wrong("train_step", "the schedule stepped before the optimizer",
          old="    optimizer.step()\n    scheduler.step()\n", new="    scheduler.step()\n    optimizer.step()\n",
          message="stepped before the optimizer"),
    wrong("train_step", "no gradient clipping",
          old="    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)\n", new="",
          message="the gradients are not clipped"),
    wrong("train_step", "gradients clipped by value",
          old="torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)",
          new="torch.nn.utils.clip_grad_value_(model.parameters(), max_grad_norm)",
          message="clipped to +-max_grad_norm"),
    wrong("train_step", "clipped at 1.0 whatever max_grad_norm says",
          old="clip_grad_norm_(model.parameters(), max_grad_norm)", new="clip_grad_norm_(model.parameters(), 1.0)",
          message="clipped at a norm of 1.0"),
    wrong("train_step", "the forward pass under torch.no_grad()",
          old='    start_logits, end_logits = model(batch["token_ids"], batch["segment_ids"], batch["padding_mask"])\n',
          new='    with torch.no_grad():\n'
              '        start_logits, end_logits = model(batch["token_ids"], batch["segment_ids"], '
              'batch["padding_mask"])\n', message="no gradient history"),
    wrong("train_step", "the loss returned as a tensor", old="return loss.item()", new="return loss",
          message="returned a Tensor"),
    wrong("train_step", "gradients cleared after the step, loss as float(loss.detach())", source=(
        "def train_step(model, batch, optimizer, scheduler, max_grad_norm=1.0):\n"
        "    start, end = model(batch['token_ids'], batch['segment_ids'], batch['padding_mask'])\n"
        "    loss = qa_loss(start, end, batch['start_positions'], batch['end_positions'])\n"
        "    loss.backward()\n"
        "    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=max_grad_norm)\n"
        "    optimizer.step()\n"
        "    scheduler.step()\n"
        "    model.zero_grad(set_to_none=True)\n"
        "    return float(loss.detach())\n"), message="already in .grad when train_step was called"),
    wrong("train_step", "optimizer.zero_grad() moved after the schedule's step", source=(
        "def train_step(model, batch, optimizer, scheduler, max_grad_norm=1.0):\n"
        "    start, end = model(batch['token_ids'], batch['segment_ids'], batch['padding_mask'])\n"
        "    loss = qa_loss(start, end, batch['start_positions'], batch['end_positions'])\n"
        "    loss.backward()\n"
        "    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)\n"
        "    optimizer.step()\n"
        "    scheduler.step()\n"
        "    optimizer.zero_grad()\n"
        "    return loss.item()\n"), message="already in .grad when train_step was called"),
    right("train_step", "gradients zeroed (not set to None) before the step and cleared after it too", source=(
        "def train_step(model, batch, optimizer, scheduler, max_grad_norm=1.0):\n"
        "    optimizer.zero_grad(set_to_none=False)\n"
        "    start, end = model(batch['token_ids'], batch['segment_ids'], batch['padding_mask'])\n"
        "    loss = qa_loss(start, end, batch['start_positions'], batch['end_positions'])\n"
        "    loss.backward()\n"
        "    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=max_grad_norm)\n"
        "    optimizer.step()\n"
        "    scheduler.step()\n"
        "    model.zero_grad()\n"
        "    return float(loss.detach())\n")),
    right("train_step", "model.zero_grad() and the batch unpacked", source=(
        "def train_step(model, batch, optimizer, scheduler, max_grad_norm=1.0):\n"
        "    model.zero_grad()\n"
        "    ids, segments, mask = (batch[k] for k in ('token_ids', 'segment_ids', 'padding_mask'))\n"
        "    logits = model(ids, segments, mask)\n"
        "    loss = qa_loss(*logits, batch['start_positions'], batch['end_positions'])\n"
        "    loss.backward()\n"
        "    parameters = [p for p in model.parameters() if p.grad is not None]\n"
        "    torch.nn.utils.clip_grad_norm_(parameters, max_grad_norm)\n"
        "    optimizer.step()\n"
        "    scheduler.step()\n"
        "    return loss.item()\n")),
]

def _inference_mode(before: str, after: str) -> str:
    """An evaluate under torch.inference_mode with np.average, `before` and `after` the lines that set the mode."""
    return ("def evaluate(model, batches):\n"
            f"    {before}\n"
            "    losses, sizes, starts, ends = [], [], [], []\n"
            "    with torch.inference_mode():\n"
            "        for batch in batches:\n"
            "            s, e = model(batch['token_ids'], batch['segment_ids'], batch['padding_mask'])\n"
            "            losses.append(qa_loss(s, e, batch['start_positions'], batch['end_positions']).item())\n"
            "            sizes.append(s.shape[0])\n"
            "            starts.append(s.detach().cpu().numpy())\n"
            "            ends.append(e.detach().cpu().numpy())\n"
            f"    {after}\n"
            "    return dict(loss=float(np.average(losses, weights=sizes)), start_logits=np.vstack(starts),\n"
            "                end_logits=np.vstack(ends))\n")


EVALUATION = [
    wrong("evaluate", "no model.eval() (dropout on)", old="    model.eval()\n", new="",
          message="ran in training mode, with dropout on"),
    wrong("evaluate", "no torch.no_grad()", old="    with torch.no_grad():\n        for batch in batches:",
          new="    if True:\n        for batch in batches:", message="torch.no_grad()"),
    wrong("evaluate", "left in evaluation mode", old="    model.train()\n", new="",
          message="left the model in evaluation mode"),
    wrong("evaluate", "the mean of the batches' losses", source=(
        "def evaluate(model, batches):\n"
        "    model.eval()\n"
        "    losses, starts, ends = [], [], []\n"
        "    with torch.no_grad():\n"
        "        for batch in batches:\n"
        "            s, e = model(batch['token_ids'], batch['segment_ids'], batch['padding_mask'])\n"
        "            losses.append(qa_loss(s, e, batch['start_positions'], batch['end_positions']).item())\n"
        "            starts.append(s.cpu().numpy())\n"
        "            ends.append(e.cpu().numpy())\n"
        "    model.train()\n"
        "    return {'loss': float(np.mean(losses)), 'start_logits': np.concatenate(starts),\n"
        "            'end_logits': np.concatenate(ends)}\n"), message="the mean of the batches' losses"),
    wrong("evaluate", "the loss left a tensor", old="total += loss.item() * size", new="total += loss * size",
          message="the loss is a Tensor"),
    wrong("evaluate", "the logits left as tensors", source=(
        "def evaluate(model, batches):\n"
        "    model.eval()\n"
        "    total, count, starts, ends = 0.0, 0, [], []\n"
        "    with torch.no_grad():\n"
        "        for batch in batches:\n"
        "            s, e = model(batch['token_ids'], batch['segment_ids'], batch['padding_mask'])\n"
        "            total += qa_loss(s, e, batch['start_positions'], batch['end_positions']).item() * len(s)\n"
        "            count += len(s)\n"
        "            starts.append(s)\n"
        "            ends.append(e)\n"
        "    model.train()\n"
        "    return {'loss': total / count, 'start_logits': torch.cat(starts), 'end_logits': torch.cat(ends)}\n"),
          message="return one NumPy array"),
    wrong("evaluate", "inference_mode, the mode restored as it was, np.average",
          source=_inference_mode("was_training = model.training\n    model.eval()", "model.train(was_training)"),
          message="left the model in evaluation mode"),
    wrong("evaluate", "model.train() only when it was training before",
          source=_inference_mode("was_training = model.training\n    model.eval()",
                                 "if was_training:\n        model.train()"),
          message="left the model in evaluation mode"),
    right("evaluate", "inference_mode, np.average, training mode switched on at the end",
          source=_inference_mode("model.train(False)", "model.train(True)")),
    right("evaluate", "torch.cat on the device, then one conversion", source=(
        "def evaluate(model, batches):\n"
        "    model.eval()\n"
        "    with torch.no_grad():\n"
        "        outputs = [model(b['token_ids'], b['segment_ids'], b['padding_mask']) for b in batches]\n"
        "        start = torch.cat([s for s, _ in outputs])\n"
        "        end = torch.cat([e for _, e in outputs])\n"
        "        positions = [torch.cat([b[k] for b in batches]) for k in ('start_positions', 'end_positions')]\n"
        "        loss = qa_loss(start, end, *positions).item()\n"
        "    model.train()\n"
        "    return {'loss': loss, 'start_logits': start.cpu().numpy(), 'end_logits': end.cpu().numpy()}\n")),
]

VARIANTS = MODEL + LOSS + STEP + EVALUATION
