/** A refusal of an operator action: shown to the operator as is. */
export class OperatorError extends Error {}
