// The web page: send the lines to /v1/translate, list the translations, and draw the
// alignment of the selected hypothesis as an SVG heatmap whose rows and columns light
// up together when pointed at. Plain DOM and SVG, no libraries, so it works offline.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const CELL = 22; // side of one heatmap cell, in pixels
const CHAR_WIDTH = 7.5; // width of one 12px monospace character, for the label margins
const STRONG = 0.5; // a link i–j is shown when α_ij is at least this fraction of row i's largest weight

const page = {
  model: null, // the answer of GET /v1/model
  sources: [], // the lines last sent
  translations: [], // the answer of POST /v1/translate for them
};

function element(id) {
  return document.getElementById(id);
}

function showStatus(message, isError = false) {
  const status = element("status");
  status.textContent = message;
  status.classList.toggle("error", isError);
}

function describeModel(model) {
  const attention = model.has_alignment
    ? `${model.architecture.attention.score} attention`
    : "no attention (fixed-context encoder–decoder)";
  const parts = [
    `${model.source_language} → ${model.target_language}`,
    attention,
    `${model.parameters.toLocaleString("en")} parameters`,
  ];
  const training = model.training;
  if (training) {
    parts.push(`${training.steps.toLocaleString("en")} training steps`);
    if (training.best_valid_bleu !== null) {
      parts.push(`best validation BLEU ${training.best_valid_bleu.toFixed(2)}`);
    }
  }
  return parts.join(" · ");
}

async function loadModel() {
  try {
    const response = await fetch("v1/model");
    const model = await response.json();
    if (!response.ok) {
      throw new Error(model.error || `HTTP ${response.status}`);
    }
    page.model = model;
    element("model-info").textContent = describeModel(model);
    for (const id of ["beam-size", "n-best"]) {
      element(id).max = model.limits.max_beam_size;
    }
    element("beam-size").value = model.search.beam_size;
  } catch (error) {
    element("model-info").textContent = "";
    showStatus(`Could not read the model description: ${error.message}`, true);
  }
}

function sourceLines() {
  const lines = element("source").value.split(/\r?\n/);
  if (lines.length > 1 && lines[lines.length - 1] === "") {
    lines.pop();
  }
  return lines;
}

async function postTranslate(texts) {
  const body = {
    texts,
    beam_size: Number(element("beam-size").value),
    n_best: Number(element("n-best").value),
    alignments: true,
  };
  const response = await fetch("v1/translate", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) {
    throw new Error(answer.error || `the server answered HTTP ${response.status}`);
  }
  return answer.translations;
}

async function translate(event) {
  event.preventDefault();
  const texts = sourceLines();
  if (texts.every((text) => text.trim() === "")) {
    showStatus("Type or paste a sentence first.", true);
    return;
  }
  const button = element("translate-button");
  button.disabled = true;
  showStatus("Translating…");
  try {
    page.translations = await postTranslate(texts);
    page.sources = texts;
    showResults();
    const first = page.translations.findIndex((t) => t.source_tokens.length > 0);
    select(Math.max(first, 0), 0);
    showStatus(`Translated ${texts.length} line${texts.length === 1 ? "" : "s"}.`);
  } catch (error) {
    showStatus(error.message, true);
  } finally {
    button.disabled = false;
  }
}

function showResults() {
  const list = element("results");
  list.replaceChildren();
  page.translations.forEach((translation, index) => {
    const item = document.createElement("li");
    item.className = "result";
    item.dataset.index = index;
    item.tabIndex = 0;
    const text = document.createElement("span");
    text.className = translation.text ? "translation" : "translation empty";
    text.textContent = translation.text || "(empty line)";
    const source = document.createElement("span");
    source.className = "source";
    source.textContent = page.sources[index];
    item.append(text, source);
    list.append(item);
  });
  element("output").hidden = false;
}

function hypotheses(translation) {
  return [translation, ...translation.alternatives];
}

function select(index, rank) {
  for (const item of element("results").children) {
    item.classList.toggle("selected", Number(item.dataset.index) === index);
  }
  const translation = page.translations[index];
  showNbest(translation, index, rank);
  const chosen = hypotheses(translation)[rank];
  drawHeatmap(element("heatmap"), translation.source_tokens, chosen.target_tokens, chosen.alignment);
}

function showNbest(translation, index, rank) {
  const list = element("nbest");
  list.replaceChildren();
  hypotheses(translation).forEach((hypothesis, k) => {
    const item = document.createElement("li");
    item.className = k === rank ? "hypothesis selected" : "hypothesis";
    item.dataset.rank = k;
    item.dataset.index = index;
    item.tabIndex = 0;
    const text = document.createElement("span");
    text.className = hypothesis.text ? "text" : "text empty";
    text.textContent = hypothesis.text || "(empty)";
    const score = document.createElement("span");
    score.className = "score";
    score.textContent = hypothesis.score.toFixed(3);
    item.append(text, score);
    list.append(item);
  });
}

function notice(container, message) {
  const paragraph = document.createElement("p");
  paragraph.className = "notice";
  paragraph.id = "no-alignment";
  paragraph.textContent = message;
  container.replaceChildren(paragraph);
}

function drawHeatmap(container, sourceTokens, targetTokens, alignment) {
  if (page.model && !page.model.has_alignment) {
    notice(
      container,
      "This model has no alignment model (model.attention: none): it is the fixed-context " +
        "encoder–decoder, which produces every target word from the same summary of the whole " +
        "source sentence, so there is no alignment to show.",
    );
  } else if (sourceTokens.length === 0) {
    notice(container, "This line is empty: there is nothing to align.");
  } else if (!alignment) {
    notice(container, "The server sent no alignment for this translation.");
  } else {
    container.replaceChildren(heatmapSvg(sourceTokens, targetTokens, alignment));
  }
}

function svgElement(name, attributes, text) {
  const node = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attributes)) {
    node.setAttribute(key, value);
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

function labelSpace(tokens) {
  return Math.ceil(Math.max(...tokens.map((t) => t.length)) * CHAR_WIDTH) + 12;
}

function heatmapSvg(sourceTokens, targetTokens, alignment) {
  const left = labelSpace(targetTokens);
  const top = labelSpace(sourceTokens);
  const width = left + CELL * sourceTokens.length + 2;
  const height = top + CELL * targetTokens.length + 2;
  const svg = svgElement("svg", {
    class: "alignment",
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-label": "alignment heatmap: target pieces in rows, source pieces in columns",
  });
  const parts = {
    sources: sourceTokens.map((token, j) => {
      const x = left + CELL * j + CELL / 2 + 4;
      const y = top - 6;
      const attributes = { class: "source-label", "data-s": j, x, y, transform: `rotate(-90 ${x} ${y})` };
      return svgElement("text", { ...attributes, tabindex: 0 }, token);
    }),
    targets: targetTokens.map((token, i) => {
      const y = top + CELL * i + CELL / 2 + 4;
      const attributes = { class: "target-label", "data-t": i, x: left - 6, y, "text-anchor": "end" };
      return svgElement("text", { ...attributes, tabindex: 0 }, token);
    }),
    cells: alignment.map((row, i) => row.map((weight, j) => cell(i, j, weight, left, top, sourceTokens, targetTokens))),
  };
  const frame = { class: "frame", x: left, y: top };
  svg.append(
    svgElement("rect", { ...frame, width: CELL * sourceTokens.length, height: CELL * targetTokens.length }),
    ...parts.sources,
    ...parts.targets,
    ...parts.cells.flat(),
  );
  connectHighlighting(svg, parts, strongLinks(alignment));
  return svg;
}

function cell(i, j, weight, left, top, sourceTokens, targetTokens) {
  const rect = svgElement("rect", {
    class: "cell",
    "data-t": i,
    "data-s": j,
    "data-weight": weight,
    x: left + CELL * j,
    y: top + CELL * i,
    width: CELL,
    height: CELL,
    "fill-opacity": Math.max(0, Math.min(1, weight)),
  });
  rect.append(svgElement("title", {}, `${targetTokens[i]} ← ${sourceTokens[j]}: ${weight.toFixed(3)}`));
  return rect;
}

function strongLinks(alignment) {
  return alignment.map((row) => {
    const largest = Math.max(...row);
    return row.map((weight) => largest > 0 && weight >= STRONG * largest);
  });
}

// Pointing at target piece i (its label or any cell in its row) highlights it, the source
// pieces it attends to and the cells between; pointing at source piece j highlights the
// target pieces that attend to it. Keyboard focus on a label does the same.
function connectHighlighting(svg, parts, strong) {
  const lit = [];
  const light = (node) => {
    node.classList.add("highlight");
    lit.push(node);
  };
  const clear = () => {
    while (lit.length) {
      lit.pop().classList.remove("highlight");
    }
    svg.classList.remove("hovering");
  };
  const showTarget = (i) => {
    light(parts.targets[i]);
    strong[i].forEach((isStrong, j) => {
      if (isStrong) {
        light(parts.sources[j]);
        light(parts.cells[i][j]);
      }
    });
  };
  const showSource = (j) => {
    light(parts.sources[j]);
    strong.forEach((row, i) => {
      if (row[j]) {
        light(parts.targets[i]);
        light(parts.cells[i][j]);
      }
    });
  };
  const point = (event) => {
    const node = event.target.closest("[data-t], [data-s]");
    clear();
    if (!node) {
      return;
    }
    svg.classList.add("hovering");
    if (node.hasAttribute("data-t")) {
      showTarget(Number(node.getAttribute("data-t")));
    } else {
      showSource(Number(node.getAttribute("data-s")));
    }
  };
  svg.addEventListener("mouseover", point);
  svg.addEventListener("focusin", point);
  svg.addEventListener("mouseleave", clear);
  svg.addEventListener("focusout", clear);
}

function chooseFromList(event) {
  const item = event.target.closest("li[data-index]");
  if (!item || (event.type === "keydown" && event.key !== "Enter" && event.key !== " ")) {
    return;
  }
  event.preventDefault();
  const rank = Number(item.dataset.rank || 0);
  select(Number(item.dataset.index), rank);
  if (item.classList.contains("hypothesis")) {
    element("nbest").children[rank].focus(); // the n-best list was redrawn
  }
}

function start() {
  element("translate-form").addEventListener("submit", translate);
  element("source").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      element("translate-form").requestSubmit();
    }
  });
  for (const id of ["results", "nbest"]) {
    element(id).addEventListener("click", chooseFromList);
    element(id).addEventListener("keydown", chooseFromList);
  }
  loadModel();
}

start();
