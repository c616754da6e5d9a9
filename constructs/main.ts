/**
 * `npm run synth`: writes the project's app (see app.ts) to `dist/`, or to `CDK8S_OUTDIR`.
 */
import { App } from 'cdk8s';
import { defineProjectCharts } from './app';

const app = new App({ outdir: process.env.CDK8S_OUTDIR ?? 'dist' });
defineProjectCharts(app);
app.synth();
