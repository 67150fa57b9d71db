"""Finding the extension's block nodes (``ext/blocks.py``): the same nodes, in the same
order, as a walk of every node finds, wherever the page nests them."""

from __future__ import annotations

from docutils import nodes
from docutils.core import publish_doctree

from sphinx_gpu_admonition.ext.blocks import NOTICE_CLASS, block_nodes, blocks_of, notices

#: notices at the top, in a list, a block quote, a table cell, a container, another
#: admonition (an exercise's solution) and nested in a notice; text everywhere around
PAGE = f"""
Title
=====

Some *text* with ``code`` and a `link <https://example.org>`_.

.. admonition:: First
   :class: {NOTICE_CLASS}

   Body with **strong** text.

   .. admonition:: Nested
      :class: {NOTICE_CLASS}

      Inside the first.

- item

  .. admonition:: In a list
     :class: {NOTICE_CLASS}

     text

..

    .. admonition:: In a block quote
       :class: {NOTICE_CLASS}

       text

+-------------------------------+------+
| .. admonition:: In a table    | text |
|    :class: {NOTICE_CLASS}     |      |
|                               |      |
|    text                       |      |
+-------------------------------+------+

.. container:: outer

   .. admonition:: In a container
      :class: {NOTICE_CLASS}

      text

.. admonition:: Solution

   .. admonition:: In a solution
      :class: {NOTICE_CLASS}

      text

.. admonition:: Not a gpu notice

   text

Section
-------

.. code-block:: python

   print("a literal block")

.. admonition:: In a section
   :class: {NOTICE_CLASS}

   text
"""


def _page() -> nodes.document:
    return publish_doctree(PAGE, settings_overrides={"report_level": 5})


def test_notices_are_the_ones_a_walk_of_every_node_finds_in_page_order() -> None:
    page = _page()
    everywhere = [node for node in page.findall(nodes.admonition)
                  if NOTICE_CLASS in node["classes"]]
    found = notices(page)
    assert [node.astext().split()[0] for node in found] == [
        "First", "Nested", "In", "In", "In", "In", "In", "In"]
    assert found == everywhere and len(found) == 8


def test_matches_may_be_left_unentered_and_any_kind_is_found() -> None:
    page = _page()
    outermost = list(block_nodes(page, lambda node: isinstance(node, nodes.admonition),
                                 enter_matches=False))
    assert len(outermost) < len(list(page.findall(nodes.admonition)))
    assert all(not any(isinstance(parent, nodes.admonition)
                       for parent in _parents(node)) for node in outermost)
    assert blocks_of(page, nodes.section) == list(page.findall(nodes.section))


def _parents(node: nodes.Node) -> list[nodes.Node]:
    parents = []
    while node.parent is not None:
        node = node.parent
        parents.append(node)
    return parents
