# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""The team file, read as the untrusted data it is (docs/isolation.md, "The trust boundary").

A team file comes from team leads' pull requests and is run unattended with the platform's credentials, so it is
never handed to Ansible as variables (Ansible would template every key of a vars file, and any key may shadow a
platform setting). The inventory plugin and ``validate_team_file`` read it here, from its path, and refuse before
anything expands or templates it:

- anything but one YAML document whose only key is ``hyperpod_teams``;
- anchors and aliases (an alias bomb of a few kilobytes expands to millions of nodes in whatever walks it) and
  tags other than YAML's own scalars and collections (``!unsafe``, ``!vault``, ``!!python/...``);
- text that Jinja would read as a template (``{{``, ``{%``, ``{#``), in keys and values: it is never rendered, and
  refusing it keeps the file free of anything that would run should a value ever reach a template;
- a file larger than ``MAX_BYTES``;
- a syntax error, or a key given twice in one mapping (YAML would keep the last one silently).

Every problem names the file, line and column; all of them are reported at once.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import yaml
from yaml.constructor import SafeConstructor

try:
    SAFE_LOADER = yaml.CSafeLoader
except AttributeError:  # PyYAML without libyaml
    SAFE_LOADER = yaml.SafeLoader

TEAMS_KEY = "hyperpod_teams"
# 500 teams of the benchmark's shape take about 200 KB; a file 20 times that is no team file.
MAX_BYTES = 4 * 1024 * 1024
TEMPLATE_MARKERS = re.compile(r"\{\{|\{%|\{#")
# Deeper than any team entry (a member's uid is 4 levels down); checked while parsing, before anything recurses.
MAX_DEPTH = 32
# Digits of the largest number the team file has use for (a uid, a budget); Python refuses ints past 4,300 digits.
MAX_DIGITS = 20
_YAML_TAGS = frozenset("tag:yaml.org,2002:%s" % kind for kind in ("str", "int", "float", "bool", "null", "seq", "map"))
# Ansible loads every key of a YAML file in these directories as a trusted variable.
VARIABLE_DIRECTORIES = ("group_vars", "host_vars")


def where(path, mark):
    return "%s:%d:%d" % (path, mark.line + 1, mark.column + 1)


def shown_path(path):
    """``path`` relative to the working directory when it is below it, as the user typed it otherwise."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def duplicate_keys(path, node, found):
    """Every key given twice in one mapping of ``node``, with where both are."""
    if isinstance(node, yaml.MappingNode):
        seen = {}
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                if key.value in seen:
                    found.append("%s: key %r is given twice in one mapping (first at line %d); YAML would keep only the last" % (
                        where(path, key.start_mark), key.value, seen[key.value].line + 1))
                else:
                    seen[key.value] = key.start_mark
            duplicate_keys(path, value, found)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            duplicate_keys(path, item, found)


def _compose(path, text):
    """``(node, problems)``: the document's node, or None with the syntax error, anchors, aliases and foreign tags."""
    problems = []
    try:
        documents = depth = 0
        for event in yaml.parse(text, Loader=SAFE_LOADER):
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
                if depth == MAX_DEPTH + 1:
                    problems.append("%s: nested more than %d levels deep: no team entry is" % (where(path, event.start_mark), MAX_DEPTH))
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
            if isinstance(event, yaml.DocumentStartEvent):
                documents += 1
                if documents == 2:
                    problems.append("%s: a second YAML document: the team file is one document" % where(path, event.start_mark))
            elif isinstance(event, yaml.AliasEvent):
                problems.append("%s: YAML alias *%s: the team file takes no anchors or aliases (each team's entry is written out)" % (
                    where(path, event.start_mark), event.anchor))
            elif isinstance(event, (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                if event.anchor is not None:
                    problems.append("%s: YAML anchor &%s: the team file takes no anchors or aliases (each team's entry is written out)" % (
                        where(path, event.start_mark), event.anchor))
                if event.tag not in (None, "!") and event.tag not in _YAML_TAGS:
                    problems.append("%s: YAML tag %s: the team file is plain data, without tags" % (where(path, event.start_mark), event.tag))
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        at = where(path, mark) if mark is not None else path
        return None, ["%s: YAML syntax error: %s%s" % (at, e.problem or "", (" (%s)" % e.context) if e.context else "")]
    except yaml.YAMLError as e:
        return None, ["%s: cannot be read as YAML: %s" % (path, e)]
    if problems:
        return None, problems
    return yaml.compose(text, Loader=SAFE_LOADER), []


def _values(path, node, found, unbuildable):
    """Text Jinja would read as a template (``found``), and what cannot be built as plain data (``unbuildable``): a type
    YAML resolves beyond plain data (the merge key ``<<``, ``=``, a timestamp), a number too long to be one, a key that
    is not text."""
    if node.tag not in _YAML_TAGS:
        shown = " %r" % node.value if isinstance(node, yaml.ScalarNode) else ""
        unbuildable.append("%s:%s is read by YAML as %s, which the team file does not take (quote text; the merge key << is refused "
                           "like anchors)" % (where(path, node.start_mark), shown, node.tag.rsplit(":", 1)[-1]))
    if isinstance(node, yaml.ScalarNode):
        marker = TEMPLATE_MARKERS.search(node.value)
        if marker:
            found.append("%s: %r looks like a Jinja template: the team file is data and is never templated; remove the %s" % (
                where(path, node.start_mark), node.value, marker.group(0)))
        if node.tag.endswith((":int", ":float")) and len(node.value) > MAX_DIGITS:
            unbuildable.append("%s: a number of %d characters: the team file takes none longer than %d" % (
                where(path, node.start_mark), len(node.value), MAX_DIGITS))
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                _values(path, key, found, unbuildable)
            else:
                unbuildable.append("%s: a key that is not text" % where(path, key.start_mark))
            _values(path, value, found, unbuildable)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _values(path, item, found, unbuildable)


def _places(path, node, at, places):
    """``places[(index, key, ...)]`` = where the value at that path of ``hyperpod_teams`` is, for its problems."""
    places[at] = where(path, node.start_mark)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                _places(path, value, at + (key.value,), places)
                if not isinstance(value, yaml.ScalarNode):  # a section is where its key is
                    places[at + (key.value,)] = where(path, key.start_mark)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _places(path, item, at + (index,), places)


class TeamFile(object):
    """What ``read`` found: ``teams`` (None when the file could not be read), ``places``, ``problems``."""

    def __init__(self, path, teams=None, places=None, problems=None):
        self.path = path
        self.teams = teams
        self.places = places or {}
        self.problems = problems or []

    def place(self, index, field):
        """Where the deepest value along ``field`` (``quota.resources[0].count``) of team ``index`` is, or None."""
        found = self.places.get((index,))
        at = (index,)
        for part in re.findall(r"[^.\[\]]+|\[\d+\]", field or ""):
            at += (int(part[1:-1]),) if part.startswith("[") else (part,)
            if at not in self.places:
                break
            found = self.places[at]
        return found


def placement_problems(team_file, inventory_dir=None):
    """Why ``team_file`` is where Ansible would load it as variables (or as an inventory source), if it is."""
    parts = os.path.normpath(os.path.abspath(team_file)).split(os.sep)
    problems = []
    for directory in VARIABLE_DIRECTORIES:
        if directory in parts[:-1]:
            problems.append("%s: the team file is in a %s directory, whose every key Ansible loads as a trusted variable: a team "
                            "lead's pull request could then set any platform setting or run code. Move it out (teams/teams.yml) and "
                            "point the inventory's team_file at it (docs/isolation.md)" % (shown_path(team_file), directory))
    if inventory_dir:
        inside = os.path.commonpath([os.path.abspath(inventory_dir), os.path.abspath(team_file)]) == os.path.abspath(inventory_dir)
        if inside:
            problems.append("%s: the team file is inside the inventory directory %s, which Ansible reads as inventory (and its "
                            "vars as trusted variables). Move it out (teams/teams.yml, docs/isolation.md)" % (
                                shown_path(team_file), shown_path(inventory_dir)))
    return problems


def read(path):
    """The team file at ``path``, read as data (see the module's docstring): a ``TeamFile``.

    ``path`` may be a directory of team files, one team each (``teams/vision.yml`` holds team ``vision`` and nothing
    else): a code host's owners file (CODEOWNERS) then gives each file to its team's lead, so that a lead's pull request
    can change their team's entry only. Their teams are read in the order of the files' names.
    """
    if not os.path.isdir(path):
        return _read_file(path)
    shown = shown_path(path)
    names = sorted(name for name in os.listdir(path) if name.endswith((".yml", ".yaml")) and os.path.isfile(os.path.join(path, name)))
    whole = TeamFile(shown, [], {}, [])
    for name in names:
        one = _read_file(os.path.join(path, name))
        whole.problems.extend(one.problems)
        if one.teams is None:
            whole.teams = None
            continue
        team = os.path.splitext(name)[0]
        if not (isinstance(one.teams, list) and len(one.teams) == 1 and isinstance(one.teams[0], dict) and one.teams[0].get("name") == team):
            whole.problems.append("%s: a file of the team directory holds one team, named as the file: %s" % (one.path, team))
        if whole.teams is not None and isinstance(one.teams, list):
            offset = len(whole.teams)
            whole.teams.extend(one.teams)
            whole.places.update(((at[0] + offset,) + at[1:], place) for at, place in one.places.items() if at)
    if not names:
        whole.problems.append("%s: a team directory without a team file (*.yml)" % shown)
    return whole


def _read_file(path):
    shown = shown_path(path)
    try:
        size = os.path.getsize(path)
        if size > MAX_BYTES:
            return TeamFile(shown, problems=["%s: %d bytes: a team file is at most %d bytes" % (shown, size, MAX_BYTES)])
        with open(path, "rb") as stream:
            text = stream.read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        return TeamFile(shown, problems=["%s: cannot be read: %s" % (shown, e)])
    node, problems = _compose(shown, text)
    if node is None:
        return TeamFile(shown, problems=problems or ["%s: is empty: it must define %s" % (shown, TEAMS_KEY)])
    duplicate_keys(shown, node, problems)
    unbuildable = []
    _values(shown, node, problems, unbuildable)
    problems.extend(unbuildable)
    teams_node = None
    if not isinstance(node, yaml.MappingNode):
        problems.append("%s: must be a mapping with the one key %s" % (where(shown, node.start_mark), TEAMS_KEY))
    else:
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == TEAMS_KEY:
                teams_node = value
            else:
                problems.append("%s: key %r: a team file holds %s only; the platform's settings are in the cluster file and the "
                                "inventory, which team leads do not change" % (where(shown, key.start_mark), key.value, TEAMS_KEY))
        if teams_node is None:
            problems.append("%s: no %s key" % (shown, TEAMS_KEY))
    if teams_node is None or unbuildable:
        return TeamFile(shown, problems=problems)
    places = {}
    _places(shown, teams_node, (), places)
    return TeamFile(shown, SafeConstructor().construct_document(teams_node), places, problems)
