// Clickable notation: click a symbol in a formula (or a notation table's formula) and the
// same name lights up in the page's code cells, e.g. W_Q -> W_q, d_{\text{model}} -> d_model.
// MathJax (CHTML) draws each character as an <mjx-c class="mjx-cHEX">, so a symbol's name is
// read from those code points; the code's names are Pygments' spans in the code cells.
(() => {
  const GREEK = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi " +
    "omicron pi rho varsigma sigma tau upsilon phi chi psi omega";
  const greek = GREEK.split(" ");

  // one MathJax character as plain text: mathematical italic/bold letters as ASCII
  const letter = (cp) => {
    if (cp >= 0x1d400 && cp <= 0x1d6a3) return String.fromCharCode(((cp - 0x1d400) % 52) < 26
      ? 65 + (cp - 0x1d400) % 52 : 97 + (cp - 0x1d400) % 52 - 26);
    if (cp === 0x210e) return "h";
    for (const start of [0x3b1, 0x1d6fc, 0x1d736]) {
      if (cp >= start && cp < start + 25) return greek[cp - start];
    }
    return String.fromCodePoint(cp);
  };
  const text = (node) => [...node.querySelectorAll("mjx-c")].map((c) => {
    const hex = [...c.classList].find((k) => /^mjx-c[0-9A-F]+$/i.test(k));
    return hex ? letter(parseInt(hex.slice(5), 16)) : c.textContent;
  }).join("");

  // the clicked symbol's name: a subscripted one as base_sub, else the identifier itself
  const symbolAt = (target) => {
    const sub = target.closest("mjx-msub, mjx-msubsup");
    if (sub && sub.children.length >= 2) {
      const base = text(sub.children[0]);
      const script = text(sub.children[sub.children.length - 1]);
      if (/^\w+$/.test(base) && /^\w+$/.test(script)) return base + "_" + script;
    }
    const mi = target.closest("mjx-mi, mjx-mtext");
    const name = mi ? text(mi) : "";
    return /^\w+$/.test(name) ? name : null;
  };

  let status = null;
  const say = (message) => {
    if (!status) {
      status = document.createElement("div");
      status.className = "notation-status";
      status.setAttribute("role", "status");
      document.body.appendChild(status);
    }
    status.textContent = message;
  };

  const highlight = (name) => {
    document.querySelectorAll(".notation-hit").forEach((el) => el.classList.remove("notation-hit"));
    const want = name.toLowerCase();
    const hits = [...document.querySelectorAll(".cell_input pre span")]
      .filter((span) => !span.children.length && span.textContent.toLowerCase() === want);
    hits.forEach((span) => span.classList.add("notation-hit"));
    document.documentElement.setAttribute("data-notation", name);
    say(hits.length ? `${name}: ${hits.length} place${hits.length > 1 ? "s" : ""} in the code`
      : `${name}: not named in this page's code`);
    return hits.length;
  };

  document.addEventListener("click", (event) => {
    const math = event.target.closest && event.target.closest("article mjx-container");
    if (!math) return;
    const name = symbolAt(event.target);
    if (name) highlight(name);
  });
})();
