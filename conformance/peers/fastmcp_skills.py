"""FastMCP's SEP-2640 skills provider as a stdio server, for the skills
profile (conformance/sep-2640/README.md; adapter
conformance/sep-2640/adapters/fastmcp.json, deviations
conformance/deviations/fastmcp.md).

    python fastmcp_skills.py DIR

serves the skills folder DIR with PyPI `fastmcp` (pinned in .ci/test's
conformance step) exactly as its documentation shows: a
`SkillsDirectoryProvider` with the experimental SEP-2640 behaviour on,
registered as a provider and as the source of a `SkillsExtension`. Nothing
here decides an answer; every answer is FastMCP's.
"""

import sys

from fastmcp import FastMCP
from fastmcp.server.providers.skills import SkillsDirectoryProvider
from fastmcp.skills.extension import SkillsExtension


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: fastmcp_skills.py SKILLS_DIR")
    mcp = FastMCP("fastmcp-skills-conformance")
    p = SkillsDirectoryProvider(roots=[sys.argv[1]], experimental_skills=True)
    mcp.add_provider(p)
    mcp.add_extension(SkillsExtension(providers=[p]))
    mcp.run(transport="stdio", show_banner=False)


if __name__ == "__main__":
    main()
