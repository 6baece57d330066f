# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""rule_errors.raised_as: an option_rules check's error comes out as the caller's own type, same message, and the
helpers of the commands and verdicts that use it keep their error types."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import kubexec, mpi_cmd, side_options
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.rule_errors import raised_as
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import quarantine


class OwnError(rules.OptionError):
    pass


class OtherError(OwnError):
    pass


def test_a_passing_check_returns_its_value_with_args_and_kwargs():
    assert raised_as(OwnError, rules.check_int, "ib_port", "7", 1, 255) == 7
    assert raised_as(OwnError, lambda a, b=0: a + b, 2, b=3) == 5


def test_an_option_error_comes_out_as_the_given_type_with_its_message():
    with pytest.raises(rules.OptionError) as plain:
        rules.check_int("ib_port", "300", 1, 255)
    with pytest.raises(OwnError) as own:
        raised_as(OwnError, rules.check_int, "ib_port", "300", 1, 255)
    assert own.type is OwnError
    assert str(own.value) == str(plain.value) and "ib_port" in str(own.value)


def test_an_error_of_the_given_type_or_a_subtype_passes_unchanged():
    def raises_other():
        raise OtherError("kept")
    with pytest.raises(OtherError) as err:
        raised_as(OwnError, raises_other)
    assert str(err.value) == "kept"


def test_other_exceptions_are_not_touched():
    def broken():
        raise ValueError("not a rule")
    with pytest.raises(ValueError):
        raised_as(OwnError, broken)


@pytest.mark.parametrize("wrap,error", [
    (side_options.checked, side_options.ArgumentError),
    (kubexec._checked, kubexec.KubexecError),  # pylint: disable=protected-access
    (mpi_cmd.rule, mpi_cmd.MpiCmdError),
    (quarantine.rule, quarantine.QuarantineError),
])
def test_each_helper_raises_its_own_type(wrap, error):
    with pytest.raises(error) as err:
        wrap(rules.check_int, "size", "-1", 1, 10)
    assert err.type is error and "size" in str(err.value)
    assert wrap(rules.check_int, "size", "4", 1, 10) == 4
