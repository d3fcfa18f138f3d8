// The insurance-claims tools of insurance.py for Node capture scripts on LangChain.js: each records into the scenario's
// ground truth what it received and returned, or that it failed (re-thrown, for the framework to handle).
export function claimsTools({ tool, z, scenario }) {
  const def = (name, description, schema, fn) => tool(async (args) => {
    try {
      const result = fn(args);
      scenario().tool(name, args, result);
      return result;
    } catch (err) {
      scenario().tool(name, args, null, true);
      throw err;
    }
  }, { name, description, schema: z.object(schema) });
  return {
    lookup_policy: def('lookup_policy', 'The cover and excess of an insurance policy.', { policy_id: z.string() },
      (a) => ({ 'PX-1': 'home cover, excess 150 EUR', 'PX-2': 'travel cover, excess 50 EUR' })[a.policy_id]),
    file_claim: def('file_claim', 'File a claim against a policy.',
      { policy_id: z.string(), amount: z.number().int() },
      (a) => `claim C-1 filed on ${a.policy_id} for ${a.amount} EUR`),
    issue_payout: def('issue_payout', 'Pay a settled claim out to the customer.', { amount: z.number().int() },
      () => { throw new Error('payout limit exceeded'); }),
    delete_account: def('delete_account', "Delete a customer's account.", { user_id: z.string() },
      (a) => `account ${a.user_id} deleted`),
  };
}
