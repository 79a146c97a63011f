"""The family contract: the ground every benchmark family stands on.

``base`` (:class:`~benchsmith.family.base.Family`, :class:`~benchsmith.family.base.Publication`,
:class:`~benchsmith.family.base.RowAuditor` and the dataclasses they exchange), the audit report
they fill (``audit_report``), the audit of families that rebuild to re-derive
(``rebuild_audit``) and the prediction requests (``requests``). It sits below the publisher,
the audit and the stages, which all read it; a family reaches the shared layers through it.
"""
