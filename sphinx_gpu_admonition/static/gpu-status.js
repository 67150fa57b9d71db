/*
 * sphinx-gpu-admonition: sorting and filtering of the {execution-status} table.
 *
 * No dependencies.  The page is complete without this script (server-side
 * sorted, every detail present); the script only
 *   - sorts: every column header holds a <button>; activating it (click, Enter,
 *     Space) reorders the notebooks' <tbody> elements by the cells' data-value
 *     attributes and updates aria-sort;
 *   - filters: shows the labelled search box and hides the notebooks whose
 *     data-filter text does not contain what was typed.
 * Rows are moved, never re-rendered; values are read once.  All settings and
 * texts come from data- attributes of the table's container.
 */
(function () {
  "use strict";

  function compare(a, b, type) {
    // missing values always sort last
    var aMissing = a === "" || a === null;
    var bMissing = b === "" || b === null;
    if (aMissing || bMissing) {
      return aMissing === bMissing ? 0 : aMissing ? 1 : -1;
    }
    if (type === "number") {
      return a - b;
    }
    return a < b ? -1 : a > b ? 1 : 0;
  }

  function init(root) {
    var table = root.querySelector("table.gpu-status-table");
    if (!table) {
      return;
    }
    var headers = Array.prototype.slice.call(
      table.querySelectorAll("thead th[data-sort-key]")
    );
    var types = headers.map(function (th) {
      return th.getAttribute("data-sort-type") || "text";
    });
    var foot = table.tFoot;
    var entries = Array.prototype.slice
      .call(table.tBodies)
      .filter(function (body) {
        return body.classList.contains("gpu-status-notebook");
      })
      .map(function (body, position) {
        var cells = body.rows[0] ? body.rows[0].cells : [];
        var values = types.map(function (type, column) {
          var cell = cells[column];
          var value = cell ? cell.getAttribute("data-value") : null;
          if (value === null || value === "") {
            return "";
          }
          return type === "number" ? parseFloat(value) : value;
        });
        return {
          body: body,
          position: position,
          values: values,
          text: (body.getAttribute("data-filter") || "").toLowerCase(),
        };
      });

    function sortBy(column, direction) {
      var type = types[column];
      var sign = direction === "ascending" ? 1 : -1;
      var sorted = entries.slice().sort(function (a, b) {
        var av = a.values[column];
        var bv = b.values[column];
        if ((av === "") !== (bv === "")) {
          return av === "" ? 1 : -1; // missing last in both directions
        }
        return sign * compare(av, bv, type) || a.position - b.position;
      });
      var fragment = document.createDocumentFragment();
      sorted.forEach(function (entry) {
        fragment.appendChild(entry.body);
      });
      table.insertBefore(fragment, foot || null);
      headers.forEach(function (th, index) {
        if (index === column) {
          th.setAttribute("aria-sort", direction);
        } else {
          th.removeAttribute("aria-sort");
        }
      });
    }

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
        sortBy(column, direction);
      });
    });

    var box = root.querySelector(".gpu-status-filter");
    var input = root.querySelector("input[data-gpu-status-filter]");
    var count = root.querySelector("[data-gpu-status-count]");
    var template = root.getAttribute("data-count-template") || "{shown} / {total}";
    if (box && input) {
      box.hidden = false;
      var apply = function () {
        var query = input.value.trim().toLowerCase();
        var shown = 0;
        entries.forEach(function (entry) {
          var visible = !query || entry.text.indexOf(query) !== -1;
          entry.body.hidden = !visible;
          if (visible) {
            shown += 1;
          }
        });
        if (count) {
          count.textContent = query
            ? template
                .replace("{shown}", String(shown))
                .replace("{total}", String(entries.length))
            : "";
        }
      };
      input.addEventListener("input", apply);
      if (input.value) {
        apply(); // a value restored by the browser
      }
    }
  }

  function start() {
    var roots = document.querySelectorAll("[data-gpu-status]");
    for (var i = 0; i < roots.length; i += 1) {
      init(roots[i]);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
