/*
 * sphinx-gpu-admonition: sorting, filtering and per-cell details of the
 * {execution-status} table.
 *
 * No dependencies.  The page is complete without this script: every notebook is
 * a row (server-side sorted, linked to its page, where the cells are), and the
 * details of failed notebooks show their error.  The script
 *   - sorts: every column header holds a <button>; activating it (click, Enter,
 *     Space) sorts an array of the rows (values read once, text compared with
 *     Intl.Collator), appends them once, and updates aria-sort;
 *   - filters: shows the labelled search box and hides the notebooks whose
 *     title, docname (the row header's) and data-filter words (status, device,
 *     flags) do not contain what was typed;
 *   - shows per-cell details: the cells are not in the page (a book of 1,000
 *     notebooks x 100 cells would make it tens of megabytes) but in JSON files
 *     beside it (data-cells-src: their URLs, separated by spaces; a row's
 *     data-cells-file: which of them holds its cells, the first by default;
 *     the notebook's entry there: the row header's docname),
 *     each fetched once, when the first of its rows' details open, and rendered
 *     for that row only, as text;
 *   - follows links to a row (#gpu-status-<notebook>, the badges' links): the
 *     row's details open and the row is highlighted.
 * All settings and texts come from data- attributes of the table's container.
 */
(function () {
  "use strict";

  var collator = new Intl.Collator(document.documentElement.lang || undefined, {
    numeric: true,
  });

  function isMissing(value) {
    return value === "" || value === null || value === undefined;
  }

  /* Sorts `entries` ({node, position, values}) of `parent` by a column, appends
   * their nodes once (before `before`), and marks the header's aria-sort. */
  function sortEntries(entries, types, headers, parent, before, column, direction) {
    var type = types[column];
    var sign = direction === "ascending" ? 1 : -1;
    entries.sort(function (a, b) {
      var av = a.values[column];
      var bv = b.values[column];
      var am = isMissing(av);
      var bm = isMissing(bv);
      if (am || bm) {
        // missing values last in both directions
        return am === bm ? a.position - b.position : am ? 1 : -1;
      }
      var order = type === "number" ? av - bv : collator.compare(av, bv);
      return sign * order || a.position - b.position;
    });
    var fragment = document.createDocumentFragment();
    entries.forEach(function (entry) {
      fragment.appendChild(entry.node);
    });
    parent.insertBefore(fragment, before || null);
    headers.forEach(function (th, index) {
      if (index === column) {
        th.setAttribute("aria-sort", direction);
      } else {
        th.removeAttribute("aria-sort");
      }
    });
  }

  /* Makes the header buttons of `headers` sort `entries`. */
  function sortable(entries, types, headers, parent, before) {
    headers.forEach(function (th, column) {
      var button = th.querySelector("button");
      if (!button) {
        return;
      }
      button.addEventListener("click", function () {
        var current = th.getAttribute("aria-sort");
        var direction;
        if (current === "ascending") {
          direction = "descending";
        } else if (current === "descending") {
          direction = "ascending";
        } else {
          direction = types[column] === "number" ? "descending" : "ascending";
        }
        sortEntries(entries, types, headers, parent, before, column, direction);
      });
    });
  }

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) {
      node.className = className;
    }
    if (text !== undefined && text !== null) {
      node.textContent = String(text);
    }
    return node;
  }

  /* A finding's sentence, its backticked code as <code> (as the findings list above
     the table shows it), every piece as text: an unpaired backtick leaves it as it is. */
  function appendSentence(parent, text) {
    var parts = String(text).split("`");
    if (parts.length % 2 === 0) {
      parts = [parts.join("`")];
    }
    parts.forEach(function (part, index) {
      if (part) {
        parent.appendChild(index % 2 === 1 ? element("code", "", part) : document.createTextNode(part));
      }
    });
  }

  function sortButton(label) {
    var button = element("button", "gpu-status-sort", label);
    button.type = "button";
    return button;
  }

  /* The cell table of one notebook, from its entry of the data file. */
  function cellTable(notebook, labels, pageHref) {
    var comparing = notebook.cmp === 1;
    var table = element("table", "gpu-status-cell-table");
    var head = table.createTHead().insertRow();
    var names = [labels.cell, labels.time, labels.share, labels.compile, labels.source, labels.flags];
    if (comparing) {
      names.push(labels.baseline, labels.ratio);
    }
    var headers = names.map(function (name, column) {
      var th = element("th");
      th.scope = "col";
      if (column < 2) {
        th.appendChild(sortButton(name));
      } else {
        th.textContent = name;
      }
      head.appendChild(th);
      return th;
    });
    headers[0].setAttribute("aria-sort", "ascending");
    var body = table.createTBody();
    var hints = labels.hints || [];
    var entries = (notebook.c || []).map(function (cell, position) {
      var row = element("tr", cell.f ? "gpu-status-flagged" : "");
      // the cell's name and its anchor on the notebook page come with the data
      var name = cell.m;
      var header = element("th");
      header.scope = "row";
      if (pageHref && cell.a) {
        var link = element("a", "", name);
        link.href = pageHref + "#" + cell.a;
        header.appendChild(link);
      } else {
        header.textContent = name;
      }
      if (cell.e) {
        // a cell allowed to raise (raises-exception, nb_execution_allow_errors) is no failure
        header.appendChild(document.createTextNode(" "));
        header.appendChild(
          cell.x
            ? element("span", "gpu-status-mark gpu-status-expected", labels.expected.replace("{error}", cell.e))
            : element("span", "gpu-status-mark gpu-status-error", cell.e)
        );
      }
      row.appendChild(header);
      row.appendChild(element("td", "", cell.t));
      row.appendChild(element("td", "", cell.p));
      var compile = element("td", "", cell.k ? cell.k : "–");
      if (cell.n) {
        compile.appendChild(element("br"));
        compile.appendChild(element("span", "gpu-status-compilations", cell.n));
      }
      row.appendChild(compile);
      var source = element("td");
      source.appendChild(element("code", "", cell.l));
      row.appendChild(source);
      var flags = element("td");
      if (cell.f) {
        var list = element("ul", "gpu-status-flags");
        cell.f.forEach(function (flag) {
          var rule = flag[0];
          var kind = hints.indexOf(rule) !== -1 ? "hint" : "rule";
          var item = element("li", "gpu-flag-" + kind);
          item.appendChild(element("span", "gpu-flag gpu-flag-" + rule, labels.flag[rule] || rule));
          item.appendChild(document.createTextNode(" "));
          appendSentence(item, flag[1]);
          list.appendChild(item);
        });
        flags.appendChild(list);
      }
      row.appendChild(flags);
      if (comparing) {
        if (cell.b === undefined) {
          var added = element("td");
          added.appendChild(element("span", "gpu-status-new", labels.new));
          row.appendChild(added);
          row.appendChild(element("td", "", "–"));
        } else {
          row.appendChild(element("td", "", cell.b));
          row.appendChild(element("td", "", cell.r));
        }
      }
      body.appendChild(row);
      return { node: row, position: position, values: [position, cell.s] };
    });
    (notebook.g || []).forEach(function (gone) {
      var row = element("tr", "gpu-status-gone-cell");
      var header = element("th", "", typeof gone.i === "number" ? "#" + gone.i + " " : "– ");
      header.scope = "row";
      header.appendChild(element("span", "gpu-status-gone", labels.gone));
      row.appendChild(header);
      row.appendChild(element("td", "", "–"));
      row.appendChild(element("td", "", "–"));
      row.appendChild(element("td", "", "–"));
      var source = element("td");
      source.appendChild(element("code", "", gone.l));
      row.appendChild(source);
      row.appendChild(element("td"));
      row.appendChild(element("td", "", gone.t));
      row.appendChild(element("td", "", "–"));
      body.appendChild(row);
    });
    var before = body.querySelector("tr.gpu-status-gone-cell");
    sortable(entries, ["number", "number"], headers.slice(0, 2), body, before);
    return table;
  }

  var dataFiles = {};

  /* The data file, fetched once per page (a promise shared by every table). */
  function loadData(src) {
    if (!dataFiles[src]) {
      dataFiles[src] = fetch(src, { credentials: "same-origin" }).then(function (response) {
        if (!response.ok) {
          throw new Error(response.status + " " + response.statusText);
        }
        return response.json();
      });
    }
    return dataFiles[src];
  }

  /* The row header's title (its link's text) and its docname. */
  function rowName(body) {
    var header = body.rows[0] && body.rows[0].cells[0];
    var docname = header && header.querySelector(".gpu-status-docname");
    return {
      title: header && header.firstChild ? header.firstChild.textContent : "",
      docname: docname ? docname.textContent : "",
    };
  }

  function init(root) {
    var table = root.querySelector("table.gpu-status-table");
    if (!table) {
      return;
    }
    root.classList.add("gpu-status-js"); // headers look sortable only now
    var headers = Array.prototype.slice.call(table.querySelectorAll("thead th[data-sort-key]"));
    var types = headers.map(function (th) {
      return th.getAttribute("data-sort-type") || "text";
    });
    var entries = Array.prototype.slice
      .call(table.tBodies)
      .filter(function (body) {
        return body.classList.contains("gpu-status-notebook");
      })
      .map(function (body, position) {
        var cells = body.rows[0] ? body.rows[0].cells : [];
        var name = rowName(body);
        var values = types.map(function (type, column) {
          var cell = cells[column];
          // the row header (the notebook) sorts by its title, the others by data-value
          var value = column === 0 ? name.title : cell ? cell.getAttribute("data-value") : null;
          if (isMissing(value)) {
            return "";
          }
          return type === "number" ? parseFloat(value) : value;
        });
        return {
          node: body,
          position: position,
          values: values,
          // found by its title and docname, and the words of data-filter
          text: [name.title, name.docname, body.getAttribute("data-filter") || ""]
            .join(" ")
            .toLowerCase(),
          flagged: body.hasAttribute("data-flagged"),
        };
      });
    sortable(entries, types, headers, table, table.tFoot);

    var box = root.querySelector(".gpu-status-filter");
    var input = root.querySelector("input[data-gpu-status-filter]");
    var onlyFlagged = root.querySelector("input[data-gpu-status-only-flagged]");
    var count = root.querySelector("[data-gpu-status-count]");
    var template = root.getAttribute("data-count-template") || "{shown} / {total}";
    if (box && input) {
      box.hidden = false;
      var apply = function () {
        var query = input.value.trim().toLowerCase();
        var flaggedOnly = onlyFlagged !== null && onlyFlagged.checked;
        var shown = 0;
        entries.forEach(function (entry) {
          var visible =
            (!query || entry.text.indexOf(query) !== -1) && (!flaggedOnly || entry.flagged);
          entry.node.hidden = !visible;
          if (visible) {
            shown += 1;
          }
        });
        if (count) {
          count.textContent =
            query || flaggedOnly
              ? template.replace("{shown}", String(shown)).replace("{total}", String(entries.length))
            : "";
        }
      };
      input.addEventListener("input", apply);
      if (onlyFlagged) {
        onlyFlagged.addEventListener("change", apply);
      }
      if (input.value || (onlyFlagged && onlyFlagged.checked)) {
        apply(); // a value restored by the browser
      }
    }

    initDetails(root);
  }

  function initDetails(root) {
    var sources = (root.getAttribute("data-cells-src") || "").split(" ").filter(Boolean);
    // browsers do not let a page read files beside it when opened from file://:
    // the rows then stay as they are without the script
    if (!sources.length || window.location.protocol === "file:") {
      return;
    }
    var labels;
    try {
      labels = JSON.parse(root.getAttribute("data-cell-labels") || "{}");
    } catch (error) {
      return;
    }
    var places = root.querySelectorAll(".gpu-status-cells");
    for (var i = 0; i < places.length; i += 1) {
      var row = places[i].closest("tr.gpu-status-details");
      if (row) {
        row.hidden = false;
      }
    }
    // "toggle" does not bubble: listen in the capture phase
    root.addEventListener(
      "toggle",
      function (event) {
        var details = event.target;
        if (!details.open || details.getAttribute("data-gpu-rendered") !== null) {
          return;
        }
        var place = details.querySelector(".gpu-status-cells");
        var row = details.closest("tbody");
        if (!place || !row) {
          return;
        }
        details.setAttribute("data-gpu-rendered", "");
        var file = parseInt(place.getAttribute("data-cells-file") || "0", 10);
        loadData(sources[file] || sources[0]).then(
          function (data) {
            var notebook = data && data.nb && data.nb[rowName(row).docname];
            if (!notebook) {
              return;
            }
            var link = row.querySelector("tr > th a[href]");
            var pageHref = link ? link.getAttribute("href").split("#")[0] : null;
            place.appendChild(cellTable(notebook, labels, pageHref));
          },
          function (error) {
            details.removeAttribute("data-gpu-rendered"); // try again on the next opening
            if (window.console) {
              window.console.warn("sphinx-gpu-admonition: no per-cell data:", error.message);
            }
          }
        );
      },
      true
    );
  }

  /* A link to a notebook's row or to a flagged cell in it (the badges and the
   * findings link there): open the row's details, highlight the row and the cell,
   * and scroll it into view (scroll-margin-top keeps it clear of sticky headers). */
  function showTarget() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var target = id ? document.getElementById(id) : null;
    var row = target && target.closest("tbody.gpu-status-notebook");
    if (!row) {
      return;
    }
    var previous = document.querySelectorAll(".gpu-status-target");
    for (var i = 0; i < previous.length; i += 1) {
      previous[i].classList.remove("gpu-status-target");
    }
    row.classList.add("gpu-status-target");
    target.classList.add("gpu-status-target");
    row.hidden = false;
    var details = row.querySelector("tr.gpu-status-details:not([hidden]) details");
    if (details) {
      details.open = true;
    }
    target.scrollIntoView({ block: "start" });
  }

  function start() {
    var roots = document.querySelectorAll("[data-gpu-status]");
    for (var i = 0; i < roots.length; i += 1) {
      init(roots[i]);
    }
    showTarget();
    window.addEventListener("hashchange", showTarget);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
