"""Per-model skill generator: turn a validated port into a replayable SKILL.md."""
from ascend_migrate.skillgen.errors import SkillGenError
from ascend_migrate.skillgen.generate import generate_model_skill, render_model_skill

__all__ = ["SkillGenError", "generate_model_skill", "render_model_skill"]
