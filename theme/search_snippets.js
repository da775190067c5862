// Search results quote a few lines of each page. Sphinx takes them from the page's HTML,
// where formulas are still TeX source (MathJax typesets them only on the page itself), so a
// snippet read "\(\sqrt{d_k}\)". Here each formula is turned into plain text first:
// display formulas become "(formula)", inline ones a readable approximation such as "√d_k".
(() => {
  const symbols = {
    top: "ᵀ", intercal: "ᵀ", cdot: "·", times: "×", le: "≤", leq: "≤", ge: "≥", geq: "≥",
    approx: "≈", to: "→", infty: "∞", sum: "Σ", alpha: "α", beta: "β", theta: "θ",
    omega: "ω", sigma: "σ", tau: "τ", pi: "π", mathbb: "", mathrm: "", text: "", operatorname: "",
    left: "", right: "", quad: " ", ",": " ", sqrt: "√",
  };
  const readable = (tex) => tex
    .replace(/^\s*\\\(|\\\)\s*$/g, "")
    .replace(/\\sqrt\{([^{}]*)\}/g, "√$1")
    .replace(/\\frac\{([^{}]*)\}\{([^{}]*)\}/g, "($1)/($2)")
    .replace(/\\([a-zA-Z]+|,)/g, (match, name) => (name in symbols ? symbols[name] : name))
    .replace(/[{}]/g, "")
    .replace(/\s+/g, " ")
    .trim();

  const install = () => {
    if (typeof Search === "undefined" || typeof Search.htmlToText !== "function") return;
    const toText = Search.htmlToText;
    Search.htmlToText = (htmlString, anchor) => {
      const doc = new DOMParser().parseFromString(htmlString, "text/html");
      doc.querySelectorAll(".math").forEach((el) => {
        const display = el.tagName === "DIV";
        el.replaceWith(doc.createTextNode(display ? " (formula) " : readable(el.textContent)));
      });
      return toText(doc.documentElement.outerHTML, anchor);
    };
  };
  // searchtools.js defines Search after this file has run; it starts searching on
  // DOMContentLoaded, and so does this listener, registered first.
  document.addEventListener("DOMContentLoaded", install);
})();
