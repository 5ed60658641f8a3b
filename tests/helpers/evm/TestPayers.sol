// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

interface IERC20Like {
    function transferFrom(address from, address to, uint256 value) external returns (bool);
}

/// Pays several recipients in one transaction, like the disperse contracts
/// and exchange batch withdrawals payers use: one Transfer log per token
/// payment, one internal call per native payment.
contract Disperse {
    function disperseEther(address payable[] calldata recipients, uint256[] calldata values) external payable {
        for (uint256 i = 0; i < recipients.length; i++) {
            (bool ok, ) = recipients[i].call{value: values[i]}("");
            require(ok, "payment failed");
        }
        uint256 left = address(this).balance;
        if (left > 0) payable(msg.sender).transfer(left);
    }

    function disperseToken(IERC20Like token, address[] calldata recipients, uint256[] calldata values) external {
        for (uint256 i = 0; i < recipients.length; i++) {
            require(token.transferFrom(msg.sender, recipients[i], values[i]), "transfer failed");
        }
    }
}

/// Sends on what it receives, like a smart wallet or an exchange's
/// forwarder: the native coin reaches the recipient from a contract, with
/// no log and as no transaction's own value.
contract Forwarder {
    function forward(address payable to) external payable {
        (bool ok, ) = to.call{value: msg.value}("");
        require(ok, "forward failed");
    }

    /// Forwards, then reverts: nothing reaches `to`.
    function forwardAndFail(address payable to) external payable {
        (bool ok, ) = to.call{value: msg.value}("");
        require(ok, "forward failed");
        revert("changed my mind");
    }
}
