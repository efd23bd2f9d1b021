// The web page: send the lines (or, for a speech model, the chosen WAV files) to
// /v1/translate, list the translations, and draw the alignment of the selected hypothesis
// as an SVG heatmap whose rows and columns light up together when pointed at; a recording's
// waveform is drawn above the heatmap on the same time axis. A document sent to
// /v1/documents comes back as a link to download its translation. Plain DOM and SVG, no
// libraries, so it works offline.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const CELL = 22; // side of one heatmap cell, in pixels
const CHAR_WIDTH = 7.5; // width of one 12px monospace character, for the label margins
const STRONG = 0.5; // a link i–j is shown when α_ij is at least this fraction of row i's largest weight
const WAVE_HEIGHT = 80; // height of a recording's waveform above the heatmap, in pixels
const WAVE_BAR = 2; // pixels per vertical bar of the waveform
// What the server says each alignment was read from, as the page explains it.
const ALIGNMENT_SOURCES = {
  attention: "Read from the attention α: where the decoder looked to predict each piece.",
  aligner:
    "Read from the model's alignment module β, which sees each target piece it aligns " +
    "(the attention's α is asked for with alignment_from: attention).",
};

const page = {
  model: null, // the answer of GET /v1/model
  sources: [], // the lines (or file names) last sent
  recordings: [], // for audio: each file's decoded {samples, rate}, or null where it could not be read
  translations: [], // the answer of POST /v1/translate for them
};

function readsAudio() {
  return page.model !== null && page.model.input === "audio";
}

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
    if (training.best_valid_score !== null) {
      parts.push(`best ${training.valid_score_label} ${training.best_valid_score.toFixed(2)}`);
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
    if (model.input === "audio") {
      element("text-input").hidden = true;
      element("markup-choice").hidden = true;
      element("document-form").hidden = true;
      element("audio-input").hidden = false;
      element("submit-hint").textContent = `at most ${model.limits.max_audio_seconds} s per file`;
    }
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

// The glossary box's terms, "source = target" a line (blank lines skipped), as the
// request's `glossary` mapping: cut at the first " = " where there is one, so that a
// source term may hold "=" ("a=b = c"), else at the first "="; a line that is not a term,
// and a source given two targets, are named in the error. Built as a Map, so that no
// term ("__proto__") is read as a property of the object.
function glossaryTerms() {
  const terms = new Map();
  const lines = new Map();
  element("glossary").value.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === "") {
      return;
    }
    const spaced = line.indexOf(" = ");
    const cut = spaced >= 0 ? spaced : line.indexOf("=");
    const source = cut < 0 ? "" : line.slice(0, cut).trim();
    const target = cut < 0 ? "" : line.slice(cut + (spaced >= 0 ? 3 : 1)).trim();
    if (!source || !target) {
      throw new Error(`Glossary line ${index + 1}: write a term as source = target.`);
    }
    if (terms.has(source) && terms.get(source) !== target) {
      throw new Error(
        `Glossary line ${index + 1}: "${source}" has the target "${terms.get(source)}" on line ${lines.get(source)}.`,
      );
    }
    terms.set(source, target);
    lines.set(source, index + 1);
  });
  return Object.fromEntries(terms);
}

async function postTranslate(items) {
  const body = {
    ...items,
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

// Base64 of binary data, in slices small enough for String.fromCharCode's argument list.
function base64(buffer) {
  const bytes = new Uint8Array(buffer);
  const parts = [];
  for (let start = 0; start < bytes.length; start += 0x8000) {
    parts.push(String.fromCharCode(...bytes.subarray(start, start + 0x8000)));
  }
  return btoa(parts.join(""));
}

// The samples of a PCM WAV file (8- or 16-bit, channels averaged) as floats in [-1, 1], and
// its sample rate; null for anything else, which the server then explains.
function wavSamples(buffer) {
  const view = new DataView(buffer);
  const tag = (offset) => String.fromCharCode(...new Uint8Array(buffer, offset, 4));
  if (buffer.byteLength < 12 || tag(0) !== "RIFF" || tag(8) !== "WAVE") {
    return null;
  }
  let format = null;
  for (let offset = 12; offset + 8 <= buffer.byteLength; ) {
    const id = tag(offset);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === "fmt " && size >= 16 && body + 16 <= buffer.byteLength) {
      format = {
        channels: view.getUint16(body + 2, true),
        rate: view.getUint32(body + 4, true),
        width: view.getUint16(body + 14, true) / 8,
      };
    } else if (id === "data" && format) {
      const { channels, rate, width } = format;
      if ((width !== 1 && width !== 2) || channels < 1) {
        return null;
      }
      const frames = Math.floor((Math.min(body + size, buffer.byteLength) - body) / (width * channels));
      const samples = new Float32Array(frames);
      for (let f = 0; f < frames; f++) {
        let sum = 0;
        for (let c = 0; c < channels; c++) {
          const at = body + (f * channels + c) * width;
          sum += width === 2 ? view.getInt16(at, true) / 32768 : (view.getUint8(at) - 128) / 128;
        }
        samples[f] = sum / channels;
      }
      return { samples, rate };
    }
    offset = body + size + (size % 2);
  }
  return null;
}

async function readInput() {
  if (!readsAudio()) {
    const texts = sourceLines();
    if (texts.every((text) => text.trim() === "")) {
      throw new Error("Type or paste a sentence first.");
    }
    const items = { texts };
    const markup = element("markup").value;
    if (markup) {
      items.markup = markup;
    }
    const glossary = glossaryTerms();
    if (Object.keys(glossary).length > 0) {
      items.glossary = glossary;
    }
    return { items, names: texts, recordings: [] };
  }
  const files = [...element("audio-files").files];
  if (files.length === 0) {
    throw new Error("Choose a WAV file first.");
  }
  const buffers = await Promise.all(files.map((file) => file.arrayBuffer()));
  return {
    items: { audio: buffers.map(base64) },
    names: files.map((file) => file.name),
    recordings: buffers.map(wavSamples),
  };
}

async function translate(event) {
  event.preventDefault();
  let input;
  try {
    input = await readInput();
  } catch (error) {
    showStatus(error.message, true);
    return;
  }
  const button = element("translate-button");
  button.disabled = true;
  showStatus(readsAudio() ? "Transcribing…" : "Translating…");
  try {
    page.translations = await postTranslate(input.items);
    page.sources = input.names;
    page.recordings = input.recordings;
    showResults();
    const first = page.translations.findIndex((t) => t.source_tokens.length > 0);
    select(Math.max(first, 0), 0);
    const count = input.names.length;
    const what = readsAudio() ? "recording" : "line";
    showStatus(`${readsAudio() ? "Transcribed" : "Translated"} ${count} ${what}${count === 1 ? "" : "s"}.`);
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
    text.textContent = shown(translation) || "(empty line)";
    const source = document.createElement("span");
    source.className = "source";
    source.textContent = page.sources[index];
    item.append(text, source);
    list.append(item);
  });
  element("output").hidden = false;
}

// What a hypothesis shows: its marked-up text when markup was asked for, always as text
// (textContent), so that its tags are read, never run: the markup comes from the input.
function shown(hypothesis) {
  return hypothesis.marked_up ?? hypothesis.text;
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
  const recording = page.recordings[index] || null;
  drawHeatmap(element("heatmap"), translation.source_tokens, chosen.target_tokens, chosen.alignment, recording);
  element("alignment-from").textContent = ALIGNMENT_SOURCES[chosen.alignment_from] || "";
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
    text.textContent = shown(hypothesis) || "(empty)";
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

function drawHeatmap(container, sourceTokens, targetTokens, alignment, recording = null) {
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
    container.replaceChildren(heatmapSvg(sourceTokens, targetTokens, alignment, recording));
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

// A recording is drawn as a waveform band above the source labels: column j of the heatmap
// lies under the audio of input vector j, from j to j + 1 times the model's seconds per vector.
function heatmapSvg(sourceTokens, targetTokens, alignment, recording = null) {
  const wave = recording && page.model && page.model.seconds_per_vector ? WAVE_HEIGHT + 8 : 0;
  const left = labelSpace(targetTokens);
  const top = wave + labelSpace(sourceTokens);
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
    columns: [],
  };
  if (wave) {
    const band = waveform(recording, sourceTokens.length, left);
    parts.columns = band.columns;
    svg.append(...band.nodes);
  }
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

// The waveform of `recording` over `columns` heatmap columns starting at x = left: one bar per
// WAVE_BAR pixels from the lowest to the highest sample in its time slice, scaled to the loudest
// sample; a transparent rect per column (data-s) lights up and can be pointed at like its label.
function waveform(recording, columns, left) {
  const { samples, rate } = recording;
  const step = page.model.seconds_per_vector;
  const middle = 4 + WAVE_HEIGHT / 2;
  let peak = 0;
  for (const value of samples) {
    peak = Math.max(peak, Math.abs(value));
  }
  const scale = peak > 0 ? (WAVE_HEIGHT / 2 - 1) / peak : 0;
  const perPixel = (step * rate) / CELL;
  const commands = [];
  for (let x = 0; x < CELL * columns; x += WAVE_BAR) {
    const from = Math.floor(x * perPixel);
    const to = Math.min(samples.length, Math.floor((x + WAVE_BAR) * perPixel));
    if (from >= to) {
      continue;
    }
    let low = samples[from];
    let high = samples[from];
    for (let k = from + 1; k < to; k++) {
      low = Math.min(low, samples[k]);
      high = Math.max(high, samples[k]);
    }
    const bar = left + x + WAVE_BAR / 2;
    commands.push(`M${bar} ${(middle - high * scale).toFixed(1)}V${(middle - low * scale + 0.5).toFixed(1)}`);
  }
  const columnRects = Array.from({ length: columns }, (_, j) => {
    const seconds = `${(j * step).toFixed(2)}–${((j + 1) * step).toFixed(2)} s`;
    const rect = svgElement("rect", {
      class: "wave-column",
      "data-s": j,
      x: left + CELL * j,
      y: 4,
      width: CELL,
      height: WAVE_HEIGHT,
    });
    rect.append(svgElement("title", {}, seconds));
    return rect;
  });
  const axis = { class: "wave-axis", x1: left, x2: left + CELL * columns, y1: middle, y2: middle };
  const path = svgElement("path", { class: "waveform", d: commands.join("") });
  return { columns: columnRects, nodes: [...columnRects, svgElement("line", axis), path] };
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
  const lightSource = (j) => {
    light(parts.sources[j]);
    if (parts.columns[j]) {
      light(parts.columns[j]);
    }
  };
  const showTarget = (i) => {
    light(parts.targets[i]);
    strong[i].forEach((isStrong, j) => {
      if (isStrong) {
        lightSource(j);
        light(parts.cells[i][j]);
      }
    });
  };
  const showSource = (j) => {
    lightSource(j);
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

// Send the chosen document's bytes as they are, and offer its translation for download
// under the same name, with the server's summary of what was done.
async function translateDocument(event) {
  event.preventDefault();
  const file = element("document-file").files[0];
  const link = element("document-download");
  link.hidden = true;
  if (link.href) {
    URL.revokeObjectURL(link.href);
  }
  showStatus(`Translating ${file.name}…`);
  try {
    const query = new URLSearchParams({ name: file.name, beam_size: element("beam-size").value });
    const glossary = glossaryTerms();
    if (Object.keys(glossary).length > 0) {
      query.set("glossary", JSON.stringify(glossary));
    }
    const response = await fetch(`v1/documents?${query}`, { method: "POST", body: file });
    if (!response.ok) {
      const answer = await response.json().catch(() => ({}));
      throw new Error(answer.error || `the server answered HTTP ${response.status}`);
    }
    link.href = URL.createObjectURL(await response.blob());
    link.download = file.name;
    link.textContent = `Download the translation of ${file.name}`;
    link.hidden = false;
    showStatus(decodeURIComponent(response.headers.get("X-Rnnsearch-Summary") || ""));
  } catch (error) {
    showStatus(`Could not translate ${file.name}: ${error.message}`, true);
  }
}

function start() {
  element("translate-form").addEventListener("submit", translate);
  element("document-form").addEventListener("submit", translateDocument);
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
